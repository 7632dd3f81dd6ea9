// The executor process against a real Redis, while the runs service is down: what it does with
// the queue itself (group creation, take-over of a dead consumer's entries, surviving FLUSHALL,
// leaving unclaimable tests pending, stopping on SIGTERM). Running tests end to end needs the runs
// service.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@testrun/gen/grpc/health/v1/health_pb";
import { TestDispatchSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  connectRedis,
  executorGroup,
  newId,
  publishTests,
  type TestKind,
  testStream,
  testStreams,
} from "@testrun/kit";
import {
  componentRedisUrl,
  createRedisUsers,
  eventually,
  findFreePort,
  type ServiceProcess,
  sampleValue,
  scrapeMetrics,
  startServiceProcess,
  startThrowawayRedis,
  type ThrowawayServer,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import type { Redis } from "ioredis";
import { redisUsers } from "../../../scripts/services.js";
import { TestQueue } from "../src/queue.js";

describe("executor process and the test queue", () => {
  let server: ThrowawayServer;
  let redis: Redis;
  let executor: ServiceProcess | undefined;
  const waiting = new Set<{ test: (line: string) => boolean; resolve: (line: string) => void }>();

  /** Resolves with the first log line, already written or still to come, whose msg is `msg`. */
  const logged = (msg: string, extra: (entry: Record<string, unknown>) => boolean = () => true) => {
    const test = (line: string) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry.msg === msg && extra(entry);
    };
    const seen = executor?.output().find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve) => waiting.add({ test, resolve }));
  };

  const start = async (env: Record<string, string> = {}) => {
    const down = `http://127.0.0.1:${await findFreePort()}`;
    executor = await startServiceProcess(
      "executor",
      {
        ...testTokens(),
        REDIS_URL: componentRedisUrl(server.url, "executor"),
        RUNS_URL: down,
        CATALOG_URL: down,
        LEASE_MS: "600",
        ...env,
      },
      {
        onLine: (line) => {
          for (const waiter of waiting) {
            if (waiter.test(line)) {
              waiting.delete(waiter);
              waiter.resolve(line);
            }
          }
        },
      },
    );
  };
  const pending = async (stream = testStream) => {
    const [count, , , consumers] = (await redis.xpending(stream, executorGroup)) as [
      number,
      string,
      string,
      [string, string][] | null,
    ];
    return { count, consumers: (consumers ?? []).map(([name]) => name) };
  };
  /** A test for the queue of `kind` (HTTP-only by default). */
  const queued = (kind: TestKind = "http") => ({
    dispatch: create(TestDispatchSchema, {
      testResultId: newId("tr"),
      runId: newId("run"),
      projectId: newId("prj"),
    }),
    kind,
  });
  /** Resolves when the executor tried (and, with the runs service down, failed) to claim a test of `kind`. */
  const handled = (kind: TestKind) =>
    logged("test handling failed", (entry) => String(entry.entry).startsWith(`${kind}:`));
  /** The consumer groups of a stream (none when nobody read it). */
  const groupsOf = async (stream: string) => {
    if ((await redis.exists(stream)) === 0) return [];
    return ((await redis.xinfo("GROUPS", stream)) as unknown[][]).map((group) => group[1]);
  };

  before(async () => {
    server = await startThrowawayRedis();
    // The executor connects as it does when deployed: its own user, the test stream only.
    await createRedisUsers(server.url, redisUsers);
    redis = await connectRedis(server.url);
  });
  beforeEach(() => redis.flushall());
  afterEach(async () => {
    await executor?.stop("SIGKILL");
    executor = undefined;
    waiting.clear();
  });
  after(async () => {
    await redis?.quit();
    await server?.stop();
  });

  it("creates the consumer group at start, and tests published before it are read", async () => {
    await publishTests(redis, [queued()]);
    await start();
    await logged("test handling failed");
    const groups = (await redis.xinfo("GROUPS", testStream)) as unknown[][];
    expect(groups.map((g) => g[1])).to.deep.equal([executorGroup]);
  });

  it("leaves a test it could not claim (runs service down) unacknowledged, and drops a malformed entry from the stream", async () => {
    await start();
    await redis.xadd(testStream, "*", "dispatch", "not a protobuf");
    await logged("dropped a malformed queue entry");
    await publishTests(redis, [queued()]);
    await logged("test handling failed");
    const { count, consumers } = await pending();
    expect(count).to.equal(1);
    expect(consumers).to.have.length(1);
    // What was handled is deleted; the stream holds only the outstanding test.
    expect(await redis.xlen(testStream)).to.equal(1);
  });

  it("takes over what a dead executor read but never acknowledged, once idle for a lease", async () => {
    await publishTests(redis, [queued()]);
    await redis.xgroup("CREATE", testStream, executorGroup, "0", "MKSTREAM");
    await redis.xreadgroup("GROUP", executorGroup, "dead-executor", "COUNT", 10, "STREAMS", testStream, ">");
    expect((await pending()).consumers).to.deep.equal(["dead-executor"]);
    await start();
    await logged("took over tests of a stopped executor");
    await logged("test handling failed");
    const { count, consumers } = await pending();
    expect(count).to.equal(1);
    expect(consumers).to.have.length(1);
    expect(consumers[0]).to.not.equal("dead-executor");
  });

  it("keeps reading after Redis lost the stream and its group (FLUSHALL)", async () => {
    await start();
    await publishTests(redis, [queued()]);
    await logged("test handling failed");
    await redis.flushall();
    const [id] = await Promise.all([
      redis.xadd(testStream, "*", "dispatch", "garbage after the flush"),
      // The next read finds no group and creates it again, from the start of the new stream.
    ]);
    await logged("dropped a malformed queue entry", (entry) => entry.entry === `http:${id}`);
    expect((await pending()).count).to.equal(0);
  });

  it("takes only HTTP tests with EXECUTOR_STEP_KINDS=http: it never reads the stream of browser tests", async () => {
    await publishTests(redis, [queued("browser"), queued("http")]);
    await start({ EXECUTOR_STEP_KINDS: "http" });
    await logged("executor started", (entry) => JSON.stringify(entry.stepKinds) === '["http"]');
    await handled("http");
    // Never read: no group on the browser stream, whose entry waits for an executor that takes it.
    expect(await groupsOf(testStreams.browser)).to.deep.equal([]);
    expect(await redis.xlen(testStreams.browser)).to.equal(1);
    expect((await pending(testStreams.http)).count).to.equal(1);
  });

  it("takes only browser tests with EXECUTOR_STEP_KINDS=browser", async () => {
    await publishTests(redis, [queued("http"), queued("browser")]);
    await start({ EXECUTOR_STEP_KINDS: "browser" });
    await handled("browser");
    expect(await groupsOf(testStreams.http)).to.deep.equal([]);
    expect(await redis.xlen(testStreams.http)).to.equal(1);
    expect((await pending(testStreams.browser)).count).to.equal(1);
  });

  it("takes every kind by default, and drops a malformed entry of the browser stream", async () => {
    await publishTests(redis, [queued("http"), queued("browser"), queued("spec")]);
    await start();
    await logged(
      "executor started",
      (entry) => JSON.stringify(entry.stepKinds) === '["http","browser","spec"]',
    );
    await Promise.all([handled("http"), handled("browser"), handled("spec")]);
    for (const stream of Object.values(testStreams)) expect((await pending(stream)).count).to.equal(1);
    const id = await redis.xadd(testStreams.browser, "*", "dispatch", "not a protobuf");
    await logged("dropped a malformed queue entry", (entry) => entry.entry === `browser:${id}`);
    expect(await redis.xlen(testStreams.browser)).to.equal(1);
  });

  it("takes the kinds listed in EXECUTOR_STEP_KINDS=browser,spec: a browser pool that runs specs too", async () => {
    await publishTests(redis, [queued("http"), queued("spec"), queued("browser")]);
    await start({ EXECUTOR_STEP_KINDS: " browser, spec" });
    await logged("executor started", (entry) => JSON.stringify(entry.stepKinds) === '["browser","spec"]');
    await Promise.all([handled("browser"), handled("spec")]);
    expect(await groupsOf(testStreams.http)).to.deep.equal([]);
    expect((await pending(testStreams.spec)).count).to.equal(1);
  });

  it("takes no Playwright spec with PLAYWRIGHT_SPECS=off, and says why in its log and gRPC health", async () => {
    await publishTests(redis, [queued("spec"), queued("http")]);
    await start({ EXECUTOR_STEP_KINDS: "http,spec", PLAYWRIGHT_SPECS: "off" });
    await logged("not taking Playwright specs: Playwright specs are turned off (PLAYWRIGHT_SPECS=off)");
    await handled("http");
    // Never read: the spec waits in its stream for an executor that runs specs.
    expect((await pending(testStreams.spec)).count).to.equal(0);
    expect(await redis.xlen(testStreams.spec)).to.equal(1);
    const client = createClient(Health, createGrpcTransport({ baseUrl: executor?.url ?? "" }));
    const { status } = await client.check({ service: "testrun.executor.tests.spec" });
    expect(Status[status]).to.equal("NOT_SERVING");
  });

  it("takes over what a dead executor left unacknowledged on the browser stream", async () => {
    await publishTests(redis, [queued("browser")]);
    await redis.xgroup("CREATE", testStreams.browser, executorGroup, "0", "MKSTREAM");
    await redis.xreadgroup("GROUP", executorGroup, "dead", "COUNT", 10, "STREAMS", testStreams.browser, ">");
    await start();
    await logged("took over tests of a stopped executor");
    await handled("browser");
    const { consumers } = await pending(testStreams.browser);
    expect(consumers).to.have.length(1);
    expect(consumers[0]).to.not.equal("dead");
  });

  describe("with a browser that does not start (CHROMIUM_PATH names no file)", () => {
    const cause = "the browser is not installed (no file at CHROMIUM_PATH)";
    const notTaking = `not taking browser tests: ${cause}`;
    /** The executor's gRPC health of `service`, as a probe asks (no token); NOT_FOUND for a name it does not report. */
    const health = async (service: string) => {
      const client = createClient(Health, createGrpcTransport({ baseUrl: executor?.url ?? "" }));
      return client.check({ service }).then(
        (answer) => Status[answer.status],
        (error: unknown) => Code[ConnectError.from(error).code],
      );
    };

    it("takes HTTP tests only, and says so once in its log, in its gRPC health and in its metrics", async () => {
      await publishTests(redis, [queued("browser"), queued("http")]);
      const metricsPort = await findFreePort();
      await start({
        CHROMIUM_PATH: "/nonexistent/chromium",
        METRICS_PORT: String(metricsPort),
        // Each launch tried is a debug line: the retries are seen, the warning is not repeated.
        LOG_LEVEL: "debug",
      });
      await logged(notTaking);
      await handled("http");
      // Never delivered: the browser test waits in its stream for an executor that can run it.
      expect((await pending(testStreams.browser)).count).to.equal(0);
      expect(await redis.xlen(testStreams.browser)).to.equal(1);

      // Alive, and ready since it takes HTTP tests; the kind it does not take, by name.
      expect(await health("")).to.equal("SERVING");
      expect(await health("testrun.executor.tests")).to.equal("SERVING");
      expect(await health("testrun.executor.tests.http")).to.equal("SERVING");
      expect(await health("testrun.executor.tests.browser")).to.equal("NOT_SERVING");

      const samples = await scrapeMetrics(`http://127.0.0.1:${metricsPort}/metrics`);
      const available = (pool: string) =>
        samples.find(
          (sample) => sample.name === "testrun_executor_kind_available" && sample.labels.pool === pool,
        )?.value;
      expect(available("http")).to.equal(1);
      expect(available("browser")).to.equal(0);
      expect(sampleValue(samples, "testrun_executor_slots", { state: "free" })).to.be.above(0);

      // Tried again (backing off from a second), said once.
      const tries = () =>
        (executor?.output() ?? []).filter((line) =>
          line.includes('"msg":"the browser could not be started"'),
        );
      await eventually(async () => (tries().length >= 2 ? true : undefined), "a second launch", 10_000);
      expect((executor?.output() ?? []).filter((line) => line.includes(notTaking))).to.have.length(1);
    });

    it("is alive but not ready when it takes browser tests only", async () => {
      await start({ EXECUTOR_STEP_KINDS: "browser", CHROMIUM_PATH: "/nonexistent/chromium" });
      await logged(notTaking);
      expect(await health("")).to.equal("SERVING");
      expect(await health("testrun.executor.tests")).to.equal("NOT_SERVING");
      expect(await health("testrun.executor.tests.browser")).to.equal("NOT_SERVING");
      expect(await health("testrun.executor.tests.http")).to.equal("NotFound");
    });
  });

  it("takes no Playwright spec when the sandbox cannot be made on its node, saying so in general words and the detail in the log", async () => {
    await publishTests(redis, [queued("spec"), queued("http")]);
    // Root, but with no folder to make the sandbox's in (as a read-only /tmp would leave it).
    await start({ EXECUTOR_STEP_KINDS: "http,spec", TMPDIR: "/nonexistent" });
    const line = JSON.parse(
      await logged(
        "not taking Playwright specs: the sandbox specs run in could not be made on the executor's node (docs/deploy.md, Playwright specs)",
      ),
    ) as { err?: { message?: string } };
    expect(line.err?.message).to.match(/ENOENT.*\/nonexistent/);
    await handled("http");
    expect((await pending(testStreams.spec)).count).to.equal(0);
  });

  it("refuses an unknown EXECUTOR_STEP_KINDS, naming the kinds", async () => {
    for (const kinds of ["ftp", "http,ftp", "http,,browser"]) {
      const error = await start({ EXECUTOR_STEP_KINDS: kinds }).then(
        () => undefined,
        (failure: Error) => failure,
      );
      expect(String(error?.message)).to.match(/EXECUTOR_STEP_KINDS/);
      expect(String(error?.message)).to.contain("must be all, or kinds among http, browser, spec");
    }
  });

  it("stops on SIGTERM and exits 0", async () => {
    await start();
    expect(await executor?.stop("SIGTERM")).to.equal(0);
  });
});

describe("TestQueue reading several streams", () => {
  let server: ThrowawayServer;
  let admin: Redis;
  let reader: Redis;
  let commands: Redis;
  let queue: TestQueue;

  const publish = (kind: TestKind, count: number) =>
    publishTests(
      admin,
      Array.from({ length: count }, () => ({
        dispatch: create(TestDispatchSchema, {
          testResultId: newId("tr"),
          runId: newId("run"),
          projectId: newId("prj"),
        }),
        kind,
      })),
    );
  const kinds = (entries: { id: string }[]) => entries.map((entry) => entry.id.split(":")[0]).sort();

  before(async () => {
    server = await startThrowawayRedis();
    await createRedisUsers(server.url, redisUsers);
    admin = await connectRedis(server.url);
  });
  beforeEach(async () => {
    await admin.flushall();
    // As the executor connects: its own user, a reading connection and one for everything else.
    reader = await connectRedis(componentRedisUrl(server.url, "executor"));
    commands = await connectRedis(componentRedisUrl(server.url, "executor"));
    queue = new TestQueue(reader, commands, "pod-1");
    await queue.ensureGroup();
  });
  afterEach(async () => {
    reader.disconnect();
    commands.disconnect();
  });
  after(async () => {
    await admin?.quit();
    await server?.stop();
  });

  it("shares the free slots between the kinds when each has a backlog", async () => {
    await publish("http", 4);
    await publish("browser", 4);
    await publish("spec", 4);
    expect(kinds(await queue.read(6, 100))).to.deep.equal([
      "browser",
      "browser",
      "http",
      "http",
      "spec",
      "spec",
    ]);
  });

  it("never hands out more entries than asked for: with one slot, an entry read beyond it comes next", async () => {
    await publish("http", 1);
    await publish("browser", 1);
    const first = await queue.read(1, 100);
    expect(first).to.have.length(1);
    const second = await queue.read(1, 100);
    expect(second).to.have.length(1);
    expect(kinds([...first, ...second])).to.deep.equal(["browser", "http"]);
    // Both were read by this consumer, and both are acknowledged by their handles.
    for (const entry of [...first, ...second]) await queue.ack(entry.id);
    expect(await admin.xlen(testStreams.http)).to.equal(0);
    expect(await admin.xlen(testStreams.browser)).to.equal(0);
  });

  it("touches and acknowledges an entry on its own stream, though both streams hold the same id", async () => {
    await admin.xadd(testStreams.http, "5-1", "dispatch", "x");
    await admin.xadd(testStreams.browser, "5-1", "dispatch", "y");
    const entries = await queue.read(2, 100);
    expect(entries.map((entry) => entry.id).sort()).to.deep.equal(["browser:5-1", "http:5-1"]);
    await queue.ack("browser:5-1");
    expect(await admin.xlen(testStreams.browser)).to.equal(0);
    expect(await admin.xlen(testStreams.http)).to.equal(1);
    await queue.touch("http:5-1");
    const [count] = (await admin.xpending(testStreams.http, executorGroup)) as [number];
    expect(count).to.equal(1);
  });
});
