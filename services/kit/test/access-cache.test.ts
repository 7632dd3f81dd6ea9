// AccessCache: the catalog's grants kept in memory, used only under the current access epoch,
// against a real Redis and a real server on a real socket whose CheckAccess counts its calls.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  CatalogService,
  CheckAccessResponseSchema,
  Permission,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { startThrowawayRedis, type ThrowawayServer, testTokens } from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import { pino } from "pino";
import { AccessCache, accessEpochKey, announceAccessChange } from "../src/access-cache.js";
import { connectRedis } from "../src/redis.js";
import { serviceClient } from "../src/rpc/client.js";
import { bind, type RpcServer, startRpcServer } from "../src/rpc/server.js";

describe("AccessCache", () => {
  const tokens = testTokens();
  const logger = pino({ level: "silent" });
  let server: RpcServer;
  let redisServer: ThrowawayServer;
  let redis: Redis;
  let admin: Redis;
  let calls = 0;
  let grant = true;

  before(async () => {
    server = await startRpcServer({
      services: [
        bind(CatalogService, {
          checkAccess: () => {
            calls++;
            if (!grant) throw new ConnectError("reading the project needs membership", Code.PermissionDenied);
            return create(CheckAccessResponseSchema, { organizationId: "org_1" });
          },
        }),
      ],
      host: "127.0.0.1",
      port: 0,
      tokens: { service: tokens.SERVICE_TOKEN },
      logger,
    });
    redisServer = await startThrowawayRedis();
    redis = await connectRedis(redisServer.url, { autoPipelining: true });
    admin = new Redis(redisServer.url);
  });
  after(async () => {
    redis?.disconnect();
    admin?.disconnect();
    await redisServer?.stop();
    await server?.shutdown(1_000);
  });
  beforeEach(async () => {
    calls = 0;
    grant = true;
    await admin.del(accessEpochKey);
  });

  const catalog = () =>
    serviceClient(CatalogService, `http://127.0.0.1:${server.port}`, { token: tokens.SERVICE_TOKEN });
  const member = (id: string) => create(ActorSchema, { kind: { case: "memberId", value: id } });
  const newCache = () => new AccessCache(catalog(), redis, logger, { ttlMs: 60_000 });
  const readGrant = (cache: AccessCache) => cache.require(member("mem_1"), "prj_1", Permission.READ);
  /** A cache holding mem_1's READ grant of prj_1, given under a fresh epoch (one catalog call). */
  const withGrant = async () => {
    await announceAccessChange(redis, logger);
    const cache = newCache();
    await readGrant(cache);
    return cache;
  };

  it("asks the catalog once per actor, project and permission within an epoch", async () => {
    await announceAccessChange(redis, logger);
    const cache = newCache();
    for (let i = 0; i < 3; i++) await cache.require(member("mem_1"), "prj_1", Permission.READ);
    expect(calls).to.equal(1);
    await cache.require(member("mem_2"), "prj_1", Permission.READ);
    await cache.require(member("mem_1"), "prj_2", Permission.READ);
    await cache.require(member("mem_1"), "prj_1", Permission.START_RUN);
    expect(calls).to.equal(4);
  });

  it("asks again once a new epoch starts, and never keeps a refusal", async () => {
    const cache = await withGrant();
    await announceAccessChange(redis, logger);
    grant = false;
    for (let i = 0; i < 2; i++) {
      const refused = await readGrant(cache).then(
        () => undefined,
        (error: unknown) => ConnectError.from(error),
      );
      expect(refused?.code).to.equal(Code.PermissionDenied);
    }
    expect(calls).to.equal(3);
  });

  it("keeps nothing without an epoch", async () => {
    const cache = newCache();
    for (let i = 0; i < 3; i++) await cache.require(member("mem_1"), "prj_1", Permission.READ);
    expect(calls).to.equal(3);
  });

  it("trusts nothing it cached before the connection to Redis dropped, whatever the epoch after", async () => {
    const cache = await withGrant();
    const reconnected = new Promise((resolve) => redis.once("ready", resolve));
    // As a Redis restart does; the epoch read after it is the same (a restored snapshot, say).
    await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
    await reconnected;
    await readGrant(cache);
    expect(calls).to.equal(2);
  });

  it("asks the catalog when Redis does not answer in time", async () => {
    const cache = await withGrant();
    await redisServer.pause();
    try {
      expect((await readGrant(cache)).organizationId).to.equal("org_1");
    } finally {
      await redisServer.resume();
    }
    expect(calls).to.equal(2);
  });
});
