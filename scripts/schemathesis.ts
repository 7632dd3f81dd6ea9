// `make schemathesis`: schemathesis against the live gateway of the whole system
// (scripts/schemathesis-run.ts says what it checks); the test run does the same as one of its files
// (test/schemathesis.e2e.test.ts).
//
// The system is the one `make run` starts, on free ports, against DATABASE_URL / REDIS_URL or
// throwaway servers, with the gateway's limits raised (`schemathesisLimits`).
//   node --conditions=source --import tsx scripts/schemathesis.ts [extra st run options]
import { startThrowawayPostgres, startThrowawayRedis, type ThrowawayServer } from "@testrun/testing";
import { runSchemathesis, schemathesisLimits } from "./schemathesis-run.js";
import { type System, startSystem } from "./system.js";

const owned: ThrowawayServer[] = [];
let system: System | undefined;

async function main(): Promise<number> {
  const postgres = process.env.DATABASE_URL ? undefined : await startThrowawayPostgres();
  const redis = process.env.REDIS_URL ? undefined : await startThrowawayRedis();
  owned.push(...[postgres, redis].filter((s): s is ThrowawayServer => s !== undefined));
  system = await startSystem({
    databaseUrl: process.env.DATABASE_URL ?? postgres?.url ?? "",
    redisUrl: process.env.REDIS_URL ?? redis?.url ?? "",
    ports: "free",
    extraEnv: schemathesisLimits,
  });
  return runSchemathesis(system, process.argv.slice(2), (line) => console.log(line));
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(error);
} finally {
  await system?.stop();
  await Promise.all(owned.map((server) => server.stop()));
}
process.exit(code);
