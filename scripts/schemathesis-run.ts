// schemathesis, an OpenAPI fuzzer nobody here wrote, against the live gateway of a whole system,
// with its default checks, from the document the gateway serves (GET /v1/openapi.json) and with the
// demo project's key: what `make schemathesis` (scripts/schemathesis.ts) and the test run
// (test/schemathesis.e2e.test.ts) both do. Any finding fails.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { createCliContext, grantCredits } from "@testrun/cli";
import { repoRoot } from "@testrun/testing";
import { seedDemo } from "./demo/seed.js";
import type { System } from "./system.js";

/**
 * The gateway's per-key and per-address limits for the fuzzed system: raised, so that the fuzzer's
 * pace is not itself a finding (429 is documented, but a run that mostly sees 429 tests nothing).
 */
export const schemathesisLimits = { RATE_LIMIT_PER_MINUTE: "100000", AUTH_FAILURES_PER_MINUTE: "100000" };

/** Installed by scripts/python-tools.sh (make python-tools) from test/python-requirements.txt. */
const st = process.env.SCHEMATHESIS ?? `${repoRoot}.tools/python/bin/st`;
/** Test cases per operation and phase: enough to find what the checks look for, bounded in time. */
const maxExamples = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? "50";

/**
 * Seeds the demo project in `system` (with credits for every start the fuzzer sends), runs
 * schemathesis against its gateway with `extraArgs` (st run options), gives `onLine` every line it
 * prints, and resolves with its exit code.
 */
export async function runSchemathesis(
  system: System,
  extraArgs: readonly string[],
  onLine: (line: string) => void,
): Promise<number> {
  const demo = await seedDemo(system.env, system.demoTargetUrl);
  // Every valid start the fuzzer sends should start a run, not meet an empty balance.
  await grantCredits(createCliContext(system.env), {
    projectId: demo.projectId,
    amount: 1_000_000,
    reason: "schemathesis",
  });
  const args = [
    "--config-file",
    `${repoRoot}scripts/schemathesis.toml`,
    "--no-color",
    "run",
    `${system.gatewayUrl}/v1/openapi.json`,
    "--max-examples",
    maxExamples,
    "--seed",
    process.env.SCHEMATHESIS_SEED ?? "20261123",
    // One worker: Python 3.11's ast.parse, which hypothesis calls, is not safe across threads.
    "--workers",
    "1",
    "--request-timeout",
    "40",
    ...extraArgs,
  ];
  // The key reaches schemathesis through its configuration (scripts/schemathesis.toml), which
  // reads it from the environment; st masks it in what it prints.
  const child = spawn(st, args, {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, TESTRUN_API_KEY: demo.secret },
  });
  // Listened for before reading: Node does not order "exit" and the end of the output.
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  createInterface({ input: child.stderr }).on("line", onLine);
  for await (const line of createInterface({ input: child.stdout })) onLine(withoutPytestBanner(line));
  const [code, signal] = await exited;
  onLine(`schemathesis: ${signal ? `killed by ${signal}` : `exit code ${code}`}`);
  return code ?? 1;
}

/**
 * schemathesis prints pytest-style banners ("===== SUMMARY =====") and closes with one ("===== 1
 * warning in 19s ====="). CI reads such a closing line anywhere in the test command's output as
 * pytest's count of tests, and one that names no passed test as a run of no tests; so banners are
 * printed as "-- SUMMARY --", and the closing one, which only repeats the time, not at all.
 */
function withoutPytestBanner(line: string): string {
  const banner = /^=+ (.*) =+$/.exec(line.trim());
  if (!banner) return line;
  return / in [\d.]+s\b/.test(banner[1] ?? "") ? "" : `-- ${banner[1]} --`;
}
