// The executor's floor of `make bench` (scripts/bench.ts, the growth table): one Node process doing
// per test only what must be done, against the benchmarked system's own PostgreSQL schema, data and
// Redis stream: read the test from the executors' stream, claim it (one statement), make its one
// HTTP call, record its completion and count it in its run, finishing the run with its last test
// (two statements), and acknowledge the stream entry. No gRPC hop, no lease heartbeats, no log line,
// no change notice: what the executor and the runs service together are compared with.
//
// It reads the tests of one-step GET tests only (the benchmark's), CONCURRENCY at a time (the
// executor's default, 4), as consumer "floor" of the executors' group: the real executor is stopped
// while it runs.
//
// Configuration: DATABASE_URL, REDIS_URL, CONCURRENCY. It logs one line, {"msg":"listening","port":0},
// as the services do, so startServiceProcess can run it.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { decodeDispatch, executorGroup, testStream } from "../../services/kit/src/dispatch.js";

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const concurrency = Number(process.env.CONCURRENCY ?? 4);
const pool = new pg.Pool({ connectionString: required("DATABASE_URL"), max: concurrency });
const commands = new Redis(required("REDIS_URL"));
let stopping = false;

interface Claimed {
  base_url: string;
  steps: { http?: { request?: { method?: string; path?: string } } }[];
}

async function claim(testResultId: string): Promise<Claimed | undefined> {
  const { rows } = await pool.query<Claimed>(
    `update runs.test_results t set status = 'running', attempt = attempt + 1, lease_owner = 'floor',
       lease_token = $2, lease_expires_at = now() + interval '1 minute', started_at = now()
     from runs.runs r where t.id = $1 and r.id = t.run_id and t.status = 'queued'
     returning r.environment_base_url as base_url, t.steps`,
    [testResultId, randomBytes(18).toString("base64url")],
  );
  return rows[0];
}

async function complete(testResultId: string, passed: boolean, durationMs: number): Promise<void> {
  const status = passed ? "passed" : "failed";
  // Two statements: the first counts the test in its run (the runs schema's trigger moves the
  // run's counters in it); the second finishes the run when that was its last open test.
  const { rows } = await pool.query<{ run_id: string }>(
    `update runs.test_results set status = $2, summary = '', duration_ms = $3, finished_at = now(),
       lease_expires_at = null
     where id = $1 and status = 'running' returning run_id`,
    [testResultId, status, durationMs],
  );
  if (!rows[0]) return;
  await pool.query(
    `update runs.runs set status = case when failed_tests > 0 then 'failed' else 'passed' end, finished_at = now()
     where id = $1 and finished_at is null and passed_tests + failed_tests + skipped_tests >= total_tests`,
    [rows[0].run_id],
  );
}

async function execute(entryId: string, fields: Buffer[]): Promise<void> {
  const dispatch = decodeDispatch(fields);
  const claimed = dispatch && (await claim(dispatch.testResultId));
  if (dispatch && claimed) {
    const http = claimed.steps[0]?.http?.request;
    const began = performance.now();
    let passed = false;
    try {
      const answer = await fetch(new URL(http?.path ?? "/", claimed.base_url), {
        method: http?.method ?? "GET",
      });
      await answer.arrayBuffer();
      passed = answer.status === 200;
    } catch {
      passed = false;
    }
    await complete(dispatch.testResultId, passed, Math.round(performance.now() - began));
  }
  await commands.call("XACK", testStream, executorGroup, entryId);
}

type Entries = [Buffer, Buffer[]][];

/** The entries of the one stream read, whichever protocol version the connection speaks (as the executor's queue.ts). */
function entriesOf(reply: [Buffer, Entries][] | [Buffer, Entries] | null): Entries {
  if (!reply || reply.length === 0) return [];
  if (Buffer.isBuffer(reply[0])) return (reply[1] as Entries | undefined) ?? [];
  return (reply as [Buffer, Entries][])[0]?.[1] ?? [];
}

/** One of CONCURRENCY workers: reads one entry at a time on a connection of its own (a blocking read holds it). */
async function worker(index: number): Promise<void> {
  const reader = new Redis(required("REDIS_URL"));
  try {
    while (!stopping) {
      const reply = (await reader.callBuffer(
        "XREADGROUP",
        "GROUP",
        executorGroup,
        `floor-${index}`,
        "COUNT",
        1,
        "BLOCK",
        1000,
        "STREAMS",
        testStream,
        ">",
      )) as [Buffer, Entries][] | [Buffer, Entries] | null;
      for (const [id, fields] of entriesOf(reply)) await execute(id.toString(), fields);
    }
  } finally {
    reader.disconnect();
  }
}

const workers = Array.from({ length: concurrency }, (_, index) =>
  worker(index).catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  }),
);
process.stdout.write(`${JSON.stringify({ msg: "listening", port: 0 })}\n`);

process.once("SIGTERM", () => {
  stopping = true;
  void Promise.allSettled(workers)
    .then(() => Promise.allSettled([pool.end(), commands.quit()]))
    .then(() => process.exit(0));
});
