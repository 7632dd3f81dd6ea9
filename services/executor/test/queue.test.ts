// The executor process against a real Redis, while the runs service is down: what it does with
// the queue itself (group creation, take-over of a dead consumer's entries, surviving FLUSHALL,
// leaving unclaimable tests pending, stopping on SIGTERM). Running tests end to end needs the runs
// service.
import { create } from "@bufbuild/protobuf";
import { TestDispatchSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { connectRedis, executorGroup, newId, publishTests, testStream } from "@testrun/kit";
import {
  componentRedisUrl,
  createRedisUsers,
  findFreePort,
  type ServiceProcess,
  startServiceProcess,
  startThrowawayRedis,
  type ThrowawayServer,
} from "@testrun/kit/testing";
import { expect } from "chai";
import type { Redis } from "ioredis";
import { redisUsers } from "../../../scripts/services.js";
import { testTokens } from "../../kit/test/helpers.js";

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
  const pending = async () => {
    const [count, , , consumers] = (await redis.xpending(testStream, executorGroup)) as [
      number,
      string,
      string,
      [string, string][] | null,
    ];
    return { count, consumers: (consumers ?? []).map(([name]) => name) };
  };
  const dispatch = () =>
    create(TestDispatchSchema, { testResultId: newId("tr"), runId: newId("run"), projectId: newId("prj") });

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
    await publishTests(redis, [dispatch()]);
    await start();
    await logged("test handling failed");
    const groups = (await redis.xinfo("GROUPS", testStream)) as unknown[][];
    expect(groups.map((g) => g[1])).to.deep.equal([executorGroup]);
  });

  it("leaves a test it could not claim (runs service down) unacknowledged, and drops a malformed entry from the stream", async () => {
    await start();
    await redis.xadd(testStream, "*", "dispatch", "not a protobuf");
    await logged("dropped a malformed queue entry");
    await publishTests(redis, [dispatch()]);
    await logged("test handling failed");
    const { count, consumers } = await pending();
    expect(count).to.equal(1);
    expect(consumers).to.have.length(1);
    // What was handled is deleted; the stream holds only the outstanding test.
    expect(await redis.xlen(testStream)).to.equal(1);
  });

  it("takes over what a dead executor read but never acknowledged, once idle for a lease", async () => {
    await publishTests(redis, [dispatch()]);
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
    await publishTests(redis, [dispatch()]);
    await logged("test handling failed");
    await redis.flushall();
    const [id] = await Promise.all([
      redis.xadd(testStream, "*", "dispatch", "garbage after the flush"),
      // The next read finds no group and creates it again, from the start of the new stream.
    ]);
    await logged("dropped a malformed queue entry", (entry) => entry.entry === id);
    expect((await pending()).count).to.equal(0);
  });

  it("stops on SIGTERM and exits 0", async () => {
    await start();
    expect(await executor?.stop("SIGTERM")).to.equal(0);
  });
});
