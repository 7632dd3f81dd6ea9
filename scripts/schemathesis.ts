// `make schemathesis` (part of `make test`): schemathesis, an OpenAPI fuzzer nobody here wrote, runs
// against the live gateway of the whole system with its default checks, from the document the
// gateway serves (GET /v1/openapi.json) and with the demo project's key. Any finding fails.
//
// The system is the one `make run` starts, on free ports, against DATABASE_URL / REDIS_URL or
// throwaway servers; the per-key and per-address limits are raised so the fuzzer's pace is not
// itself a finding (429 is documented, but a run that mostly sees 429 tests nothing).
//   node --conditions=source --import tsx scripts/schemathesis.ts [extra st run options]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { createCliContext, grantCredits } from "@testrun/cli";
import { startThrowawayPostgres, startThrowawayRedis, type ThrowawayServer } from "@testrun/kit/testing";
import { seedDemo } from "./demo/seed.js";
import { type System, startSystem } from "./system.js";

/** Installed by scripts/python-tools.sh (make python-tools) from test/python-requirements.txt. */
const st = process.env.SCHEMATHESIS ?? ".tools/python/bin/st";
/** Test cases per operation and phase: enough to find what the checks look for, bounded in time. */
const maxExamples = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? "50";

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
    extraEnv: { RATE_LIMIT_PER_MINUTE: "100000", AUTH_FAILURES_PER_MINUTE: "100000" },
  });
  const demo = await seedDemo(system.env, system.demoTargetUrl);
  // Every valid start the fuzzer sends should start a run, not meet an empty balance.
  await grantCredits(createCliContext(system.env), {
    projectId: demo.projectId,
    amount: 1_000_000,
    reason: "schemathesis",
  });

  const args = [
    "--config-file",
    "scripts/schemathesis.toml",
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
    ...process.argv.slice(2),
  ];
  // The key reaches schemathesis through its configuration (scripts/schemathesis.toml), which
  // reads it from the environment; st masks it in what it prints.
  const child = spawn(st, args, {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, TESTRUN_API_KEY: demo.secret },
  });
  // Listened for before reading: Node does not order "exit" and the end of stdout.
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) console.log(withoutPytestBanner(line));
  const [code, signal] = await exited;
  console.log(`schemathesis: ${signal ? `killed by ${signal}` : `exit code ${code}`}`);
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
