// `make run`: the whole system on this machine, each service its own process on its documented port,
// against DATABASE_URL / REDIS_URL or throwaway servers. Ctrl-C stops everything.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import {
  runServiceCommand,
  type ServiceProcess,
  startServiceProcess,
  startThrowawayPostgres,
  startThrowawayRedis,
  type ThrowawayServer,
} from "@testrun/kit/testing";
import { demoCredentials, seedDemo } from "./demo/seed.js";

/** Where the demo project's default environment points. */
const demoTargetUrl = "http://127.0.0.1:8090";

/** Fixed local ports, as README.md documents them. */
const ports: Record<string, number> = {
  keys: 7101,
  catalog: 7102,
  billing: 7103,
  runs: 7104,
  executor: 7105,
};
const withDatabase = ["keys", "catalog", "billing", "runs"];
const services = (process.env.SERVICES ?? "keys catalog billing runs executor gateway")
  .split(/\s+/)
  .filter(Boolean);

const owned: ThrowawayServer[] = [];
const running: ServiceProcess[] = [];
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await Promise.all(running.map((service) => service.stop("SIGTERM")));
    await Promise.all(owned.map((server) => server.stop()));
  }
  process.exit(code);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

try {
  const postgres = process.env.DATABASE_URL ? undefined : await startThrowawayPostgres();
  const redis = process.env.REDIS_URL ? undefined : await startThrowawayRedis();
  owned.push(...[postgres, redis].filter((s): s is ThrowawayServer => s !== undefined));

  // Tokens live as long as this run: every process gets them, nothing stores them.
  const env: Record<string, string> = {
    DATABASE_URL: process.env.DATABASE_URL ?? postgres?.url ?? "",
    REDIS_URL: process.env.REDIS_URL ?? redis?.url ?? "",
    SERVICE_TOKEN: process.env.SERVICE_TOKEN ?? randomBytes(32).toString("base64url"),
    EXECUTOR_TOKEN: process.env.EXECUTOR_TOKEN ?? randomBytes(32).toString("base64url"),
    // A fresh key each run suits throwaway databases; with your own DATABASE_URL, set VARIABLES_KEY
    // too, or variable values stored by an earlier run cannot be read.
    VARIABLES_KEY: process.env.VARIABLES_KEY ?? randomBytes(32).toString("base64"),
    HTTP_PORT: process.env.HTTP_PORT ?? "8080",
    ...Object.fromEntries(
      Object.entries(ports).map(([name, port]) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${port}`]),
    ),
  };

  for (const name of services.filter((s) => withDatabase.includes(s))) {
    await runServiceCommand(name, ["migrate"], env);
    console.log(`${name}: migrations applied`);
  }
  for (const name of services) {
    const port = String(ports[name] ?? 7100);
    running.push(
      await startServiceProcess(
        name,
        { ...env, PORT: port },
        { keepOutput: false, onLine: (l) => console.log(l) },
      ),
    );
  }
  running.push(
    await startServiceProcess(
      "demo-target",
      {
        PORT: new URL(demoTargetUrl).port,
        DEMO_USER: demoCredentials.user,
        DEMO_PASSWORD: demoCredentials.password,
      },
      {
        keepOutput: false,
        onLine: (l) => console.log(l),
        entry: "services/executor/src/demo-target/main.ts",
      },
    ),
  );
  const demo = await seedDemo(env, demoTargetUrl);
  const gateway = `http://127.0.0.1:${env.HTTP_PORT}`;
  console.log(`
Testrun is running (Ctrl-C stops everything). A demo project is seeded; its API key, shown once:

  export TESTRUN_API_KEY=${demo.secret}
  curl -s -H "Authorization: Bearer $TESTRUN_API_KEY" ${gateway}/v1/project

Admin CLI against this system:  SERVICE_TOKEN=${env.SERVICE_TOKEN} services/cli/bin/testrunctl --help
`);
  await Promise.race(running.map((service) => once(service.process, "exit")));
  // Ctrl-C reaches the children too: they exiting then is the shutdown under way, not a failure.
  if (stopping) await new Promise(() => {});
  console.error("a service exited; stopping the others");
  await stopAll(1);
} catch (error) {
  console.error(error);
  await stopAll(1);
}
