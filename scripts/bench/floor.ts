// The floors of `make bench` (scripts/bench.ts): one Node process doing only the I/O a request of
// the run path needs, against the benchmarked system's own PostgreSQL schema, data and Redis. No
// gRPC hop, no ORM, no per-request log line: what the whole system's figures are compared with.
//
//   GET  /v1/runs/:id   the read floor: one Redis round trip for the key and its rate limit (the
//                       gateway's verified-key cache entry, opened as the gateway opens it), the two
//                       SELECTs of GetRun (services/runs/src/store/reads.ts, same columns), JSON out.
//   POST /v1/runs       the start floor: the same key round trip, then in one transaction the writes
//                       a start makes (the run, its tests, billing's balance and ledger row), then
//                       the publication of the tests to the executors' stream. {"testCaseIds": [...]}
//
// What the start floor leaves out, since a single process needs none of it: the catalog's
// CheckAccess and its resolution of the selection (resolved once per selection and remembered),
// the run's `pending` state and the separate `charged` update (one transaction makes them
// unnecessary), billing's advisory lock and idempotency reads (a new run id was never charged),
// the read-back, and the `published_at` update after publishing.
//
// Configuration: DATABASE_URL, REDIS_URL, KEY_CACHE_SECRET (the system's), PORT (0: any free port).
// It logs one line, {"msg":"listening","port":N}, as the services do, so startServiceProcess can run it.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { create } from "@bufbuild/protobuf";
import { TestDispatchSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Redis } from "ioredis";
import pg from "pg";
import { publishTests } from "../../services/kit/src/dispatch.js";
import { newId } from "../../services/kit/src/ids.js";
import { fingerprintOf, keyCacheKey, openKeyCacheEntry } from "../../services/kit/src/key-cache.js";
import { runColumns, testColumns } from "../../services/runs/src/rows.js";

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const keyCacheSecret = required("KEY_CACHE_SECRET");
// The runs service's pool size (kit openDatabase), so neither side has more connections.
const pool = new pg.Pool({ connectionString: required("DATABASE_URL"), max: 10 });
const redis = new Redis(required("REDIS_URL"));

// What the gateway's check script (services/gateway/src/limits.ts) does for a key the cache holds:
// read the entry, count the request in a one-minute window. Its own counter, so the floor and the
// gateway do not share a limit.
redis.defineCommand("floorCheckKey", {
  numberOfKeys: 2,
  lua: `
local entry = redis.call('GET', KEYS[1])
local count = redis.call('INCR', KEYS[2])
local ttl = redis.call('PTTL', KEYS[2])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return {entry, count}
`,
});
const checkKey = (redis as unknown as { floorCheckKey(...args: (string | number)[]): Promise<unknown[]> })
  .floorCheckKey;
const requestsPerMinute = 1_000_000;
const keyShape = /^trk_[0-9A-Za-z]{46}$/;

/** The project of the request's key, or undefined when the key does not work. One Redis round trip. */
async function projectOf(req: IncomingMessage): Promise<string | undefined> {
  const secret = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (!secret || !keyShape.test(secret)) return undefined;
  const fingerprint = fingerprintOf(secret);
  const [raw, count] = await checkKey.call(
    redis,
    keyCacheKey(fingerprint),
    `testrun:bench-floor:rate:${fingerprint}`,
    60_000,
  );
  const entry = openKeyCacheEntry(keyCacheSecret, fingerprint, typeof raw === "string" ? raw : null);
  if (entry?.state !== "valid" || Number(count) > requestsPerMinute) return undefined;
  return entry.projectId;
}

async function getRun(projectId: string, runId: string): Promise<object | undefined> {
  const client = await pool.connect();
  try {
    const runs = await client.query(
      `select ${runColumns} from runs.runs r where r.id = $1 and r.project_id = $2 and r.charge_state = 'charged'`,
      [runId, projectId],
    );
    const run = runs.rows[0];
    if (!run) return undefined;
    const tests = await client.query(
      `select ${testColumns} from runs.test_results t where t.run_id = $1 order by t.position`,
      [runId],
    );
    return { run, tests: tests.rows };
  } finally {
    client.release();
  }
}

interface Selection {
  environment: { id: string; base_url: string };
  testCases: { id: string; name: string; steps: unknown }[];
}
const selections = new Map<string, Promise<Selection | undefined>>();

/** The project's default environment and the test cases by id, read once per selection. */
function resolve(projectId: string, testCaseIds: string[]): Promise<Selection | undefined> {
  const key = `${projectId} ${testCaseIds.join(",")}`;
  let found = selections.get(key);
  if (!found) {
    found = (async () => {
      const environments = await pool.query(
        "select id, base_url from catalog.environments where project_id = $1 and is_default",
        [projectId],
      );
      const testCases = await pool.query(
        "select id, name, steps from catalog.test_cases where project_id = $1 and id = any($2) and enabled",
        [projectId, testCaseIds],
      );
      const environment = environments.rows[0];
      if (!environment || testCases.rows.length === 0) return undefined;
      return { environment, testCases: testCases.rows };
    })();
    selections.set(key, found);
  }
  return found;
}

type Started = { status: 201; body: object } | { status: 402 | 404; body: object };

async function startRun(projectId: string, testCaseIds: string[]): Promise<Started> {
  const selection = await resolve(projectId, testCaseIds);
  if (!selection) return { status: 404, body: { error: { code: "not_found" } } };
  const runId = newId("run");
  const tests = selection.testCases.map((tc, position) => ({
    id: newId("tr"),
    test_case_id: tc.id,
    name: tc.name,
    steps: tc.steps,
    position,
  }));
  const amount = tests.length;
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query(
      `insert into runs.runs (id, project_id, environment_id, environment_base_url, test_plan_id, name, status,
         total_tests, credits_charged, charge_state, started_at, created_at, started_by_key_id, started_by_member_id)
       values ($1, $2, $3, $4, null, $5, 'running', $6, $6, 'charged', now(), now(), null, null)`,
      [runId, projectId, selection.environment.id, selection.environment.base_url, "floor run", amount],
    );
    await client.query(
      `insert into runs.test_results (id, run_id, test_case_id, name, position, status, steps, queued_at)
       select u.id, $1, u.test_case_id, u.name, u.position, 'queued', u.steps, now()
       from jsonb_to_recordset($2::jsonb) as u(id text, test_case_id text, name text, steps jsonb, position int)`,
      [runId, JSON.stringify(tests)],
    );
    const spent = await client.query<{ balance: string }>(
      "update billing.balances set balance = balance - $1, updated_at = now() where project_id = $2 and balance >= $1 returning balance",
      [amount, projectId],
    );
    if (!spent.rows[0]) {
      await client.query("rollback");
      return { status: 402, body: { error: { code: "insufficient_credits" } } };
    }
    await client.query(
      `insert into billing.ledger_entries (id, project_id, kind, amount, run_id, reason, idempotency_key, balance_after, created_at)
       values ($1, $2, 'charge', $3, $4, $5, null, $6, now())`,
      [newId("led"), projectId, -amount, runId, `run started: ${amount} tests`, spent.rows[0].balance],
    );
    await client.query("commit");
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  await publishTests(
    redis,
    // The floor's tests are HTTP ones, as the bench's are.
    tests.map((t) => ({
      dispatch: create(TestDispatchSchema, { testResultId: t.id, runId, projectId }),
      kind: "http",
    })),
  );
  return {
    status: 201,
    body: { id: runId, status: "running", tests: tests.map((t) => ({ id: t.id, name: t.name })) },
  };
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const send = (res: ServerResponse, status: number, body: object) => {
  const json = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
  res.end(json);
};

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const runPath = /^\/v1\/runs\/([^/?]+)$/.exec(req.url ?? "");
  const startPath = req.url === "/v1/runs";
  if (!(req.method === "GET" && runPath) && !(req.method === "POST" && startPath)) {
    req.resume();
    return send(res, 404, { error: { code: "not_found" } });
  }
  const body = startPath ? await bodyOf(req) : undefined;
  const projectId = await projectOf(req);
  if (!projectId) return send(res, 401, { error: { code: "unauthorized" } });
  if (runPath) {
    const run = await getRun(projectId, decodeURIComponent(runPath[1] ?? ""));
    return run ? send(res, 200, run) : send(res, 404, { error: { code: "not_found" } });
  }
  const ids = (body as { testCaseIds?: unknown })?.testCaseIds;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string"))
    return send(res, 400, { error: { code: "invalid_request" } });
  const started = await startRun(projectId, ids);
  send(res, started.status, started.body);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    if (!res.headersSent) send(res, 500, { error: { code: "internal" } });
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});

process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void Promise.allSettled([pool.end(), redis.quit()]).then(() => process.exit(0));
});
