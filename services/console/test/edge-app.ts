// The console's own HTTP app with nothing behind it: the runs and automation services are away
// (their calls fail) and every other dependency is never reached. For the tests of what the app
// answers before any lookup: its bounds per client and its refusals from the headers.
import { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { createLogger, serviceClient } from "@testrun/kit";
import { findFreePort } from "@testrun/testing";
import type { ConsoleAppOptions } from "../src/http/app.js";
import { AuthAttempts } from "../src/http/auth-limit.js";
import { ConsoleCookies } from "../src/http/cookies.js";

export const appUrl = "http://console.test";

/** The app's options: `perClient` requests a minute per client address on each anonymous route. */
export async function appWithNothingBehind(
  name: string,
  { perClient, trustProxyHops }: { perClient: number; trustProxyHops: number },
): Promise<ConsoleAppOptions> {
  const away = `http://127.0.0.1:${await findFreePort()}`;
  const client = { token: "t".repeat(32), timeoutMs: 2_000 };
  // Reached by no request these tests make: any use would fail loudly.
  const unused = {} as never;
  return {
    appUrl,
    logger: createLogger(name, "silent"),
    isReady: () => true,
    consoleService: {},
    webRoot: "/nonexistent",
    viewers: unused,
    runs: serviceClient(RunsService, away, client),
    automation: serviceClient(AutomationService, away, client),
    sessions: unused,
    links: unused,
    directory: unused,
    cookies: new ConsoleCookies(appUrl),
    authAttempts: new AuthAttempts(1000, perClient),
    badgeRequests: new AuthAttempts(1000, perClient),
    trustProxyHops,
  };
}
