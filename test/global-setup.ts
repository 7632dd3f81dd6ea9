/**
 * Mocha global fixtures: when DATABASE_URL / REDIS_URL are unset, start throwaway servers for the
 * whole run and stop them afterwards. Servers given through the environment are used as they are.
 * A throwaway MinIO (services/testing/src/minio.ts) is started only when a test first asks for it
 * (`sharedMinio`), and stopped here.
 *
 * Either way REDIS_URL stays the administrator's URL (tests read and flush through it), and the
 * components' own Redis users of the registry (helm/testrun/services.yaml) are created through
 * it, so that every service a test starts connects as it does when deployed: with
 * componentRedisUrl(REDIS_URL, <name>) and only its own rights. A REDIS_URL given from outside
 * must therefore be allowed ACL SETUSER (the default user of a server of your own).
 *
 * On a server started here, the run fails at the end when Redis refused a component anything
 * (ACL LOG): a service whose code path needs a command or key its rules lack is found even when
 * that code swallows the error (a best-effort cache write, say).
 *
 * When mocha runs files in parallel (.mocharc.cjs), each worker process gets a throwaway Redis of
 * its own, started before its first file: the test files share Redis-wide state (the runs stream,
 * Pub/Sub channels, FLUSHALL), so two files at once on one server would take each other's work.
 * PostgreSQL stays shared: every suite has a database of its own. A worker's Redis is checked for
 * refusals after each of its files, and is killed when the worker exits (services/testing/src/servers.ts).
 */
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { stopSharedMinio } from "@testrun/testing/minio";
import { builtServicesFlag, repoRoot } from "@testrun/testing/process";
import { stopTestProcessResources } from "@testrun/testing/process-scope";
import { createRedisUsers } from "@testrun/testing/redis-users";
import { startThrowawayPostgres, startThrowawayRedis, type ThrowawayServer } from "@testrun/testing/servers";
import { Redis } from "ioredis";
import { redisUsers } from "../scripts/services.js";

const started: ThrowawayServer[] = [];
let ownRedisUrl: string | undefined;

/** Set for the workers when Redis is the run's own: then each worker starts one of its own. */
const ownRedisFlag = "TESTRUN_THROWAWAY_REDIS";
let workerRedis: Promise<string> | undefined;

/**
 * Root hooks. In a parallel run they run in the workers around each file; in a serial run once,
 * around the whole run.
 */
export const mochaHooks = {
  async beforeAll(): Promise<void> {
    if (process.env.MOCHA_WORKER_ID === undefined || process.env[ownRedisFlag] !== "1") return;
    workerRedis ??= startWorkerRedis();
    process.env.REDIS_URL = await workerRedis;
  },
  async afterAll(): Promise<void> {
    // A serial run ends here: what its suites shared (test/pipeline.ts) is stopped. A worker's
    // shared resources outlive each of its files and are killed when the worker exits.
    if (process.env.MOCHA_WORKER_ID === undefined) await stopTestProcessResources();
    if (workerRedis) await failOnRefusals(await workerRedis);
  },
};

async function startWorkerRedis(): Promise<string> {
  // Stopped by the kill-on-exit of servers.ts when mocha ends the worker.
  const redis = await startThrowawayRedis();
  await createRedisUsers(redis.url, redisUsers);
  return redis.url;
}

export async function mochaGlobalSetup(): Promise<void> {
  // Every node process the tests start (services, CLIs, migrations, workers) loads the same modules:
  // V8's compiled code is kept on disk and reused (Node's module compile cache).
  process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), "testrun-node-compile-cache");
  const [postgres, redis] = await Promise.all([
    process.env.DATABASE_URL ? undefined : startThrowawayPostgres(),
    process.env.REDIS_URL ? undefined : startThrowawayRedis(),
    buildServices(),
  ]);
  if (postgres) {
    started.push(postgres);
    process.env.DATABASE_URL = postgres.url;
  }
  if (redis) {
    started.push(redis);
    process.env.REDIS_URL = redis.url;
    process.env[ownRedisFlag] = "1";
    ownRedisUrl = redis.url;
  }
  await createRedisUsers(String(process.env.REDIS_URL), redisUsers);
}

/**
 * Brings every package's dist/ up to date with its sources (`npm run build`'s `tsc -b`, incremental:
 * nothing to do when nothing changed), so that the services the tests start run their built
 * modules, as the image does, instead of compiling TypeScript at every start (services/testing/src/process.ts).
 */
async function buildServices(): Promise<void> {
  const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
  try {
    await promisify(execFile)(process.execPath, [tsc, "-b", "tsconfig.build.json"], { cwd: repoRoot });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`the services' build (tsc -b tsconfig.build.json) failed:\n${stdout}${stderr}`);
  }
  process.env[builtServicesFlag] = "1";
}

export async function mochaGlobalTeardown(): Promise<void> {
  try {
    if (ownRedisUrl) await failOnRefusals(ownRedisUrl);
  } finally {
    // MinIO (the S3 artifact store's tests) is started by the first test that needs it.
    await Promise.all([...started.splice(0).map((server) => server.stop()), stopSharedMinio()]);
  }
}

/** Throws when Redis refused one of the components' users a command, key or channel. */
async function failOnRefusals(adminUrl: string): Promise<void> {
  const admin = new Redis(adminUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let log: unknown[];
  try {
    await admin.connect();
    log = (await admin.call("ACL", "LOG")) as unknown[];
    // A worker's server is checked after each file: the next file is judged on its own calls.
    await admin.call("ACL", "LOG", "RESET");
  } finally {
    admin.disconnect();
  }
  const refusals = log.map(fieldsOf).filter((entry) => String(entry.username).startsWith("testrun-"));
  if (refusals.length === 0) return;
  const lines = refusals.map(
    (entry) =>
      `  ${entry.username}: ${entry.reason} ${entry.object} refused (${entry.context}, ${entry.count}×)`,
  );
  throw new Error(
    `Redis refused the components (ACL LOG): give the rule in helm/testrun/services.yaml, or stop the call:\n${lines.join("\n")}`,
  );
}

/** An ACL LOG entry, as a flat list (RESP2) or a map (RESP3). */
function fieldsOf(entry: unknown): Record<string, unknown> {
  if (entry instanceof Map) return Object.fromEntries(entry);
  if (!Array.isArray(entry)) return {};
  const fields: Record<string, unknown> = {};
  for (let i = 0; i + 1 < entry.length; i += 2) fields[String(entry[i])] = entry[i + 1];
  return fields;
}
