// Each component's own Redis user (helm/testrun/services.yaml `redis`), as `make run` and the tests
// create them (services/testing/src/redis-users.ts) and as the chart's Redis defines them: what each may and
// may not do, probed on a real Redis. Above all an executor, which parses responses of servers
// anyone can run, can touch nothing but the test stream: not the verified-key cache (it could
// otherwise file a key of its own making), not the gateway's counters, not the tests of others.
import { Buffer } from "node:buffer";
import {
  accessEpochKey,
  executorGroup,
  fingerprintOf,
  keyCacheKey,
  testStream,
  testStreams,
} from "@testrun/kit";
import { executorKindsKey, runChangesChannel } from "@testrun/runs/redis-names";
import {
  componentRedisUrl,
  createRedisUsers,
  repoRoot,
  startThrowawayRedis,
  type ThrowawayServer,
} from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { ISecret } from "kubernetes-models/v1/Secret";
import { redisUsers } from "../scripts/services.js";
import { renderChart } from "./helm.js";
import type { K8sObject } from "./kubernetes.js";

const components = ["keys", "catalog", "runs", "executor", "gateway"] as const;
type Component = (typeof components)[number];

const cacheEntry = keyCacheKey(fingerprintOf(`trk_${"x".repeat(46)}`));
const sealedLooking = `${"A".repeat(43)}.{"entry":{"state":"valid"}}`;

/** A command, and the components allowed to run it; everyone else must get NOPERM. */
const probes: { command: (string | number)[]; allowed: readonly Component[] }[] = [
  { command: ["PING"], allowed: components },
  { command: ["SELECT", 3], allowed: components },
  // The verified-key cache: written by the keys service, read (in its scripts) by the gateway.
  { command: ["GET", cacheEntry], allowed: ["keys", "gateway"] },
  { command: ["SET", cacheEntry, sealedLooking], allowed: ["keys", "gateway"] },
  {
    command: ["EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", 1, cacheEntry, "x"],
    allowed: ["keys", "gateway"],
  },
  { command: ["DEL", cacheEntry], allowed: ["gateway"] },
  // The gateway's counters, waits and idempotency records.
  { command: ["INCR", "testrun:gateway:rate:abc"], allowed: ["gateway"] },
  { command: ["SET", "testrun:gateway:authfail:10.0.0.1", "0"], allowed: ["gateway"] },
  { command: ["ZADD", "testrun:gateway:waits:key_x", 1, "w"], allowed: ["gateway"] },
  { command: ["SET", "testrun:gateway:idempotency:key_x:abc", "{}"], allowed: ["gateway"] },
  // The executors' queue: the runs service appends, the executors' group reads.
  { command: ["XADD", testStream, "*", "dispatch", "x"], allowed: ["runs"] },
  { command: ["XGROUP", "CREATE", testStream, executorGroup, "0", "MKSTREAM"], allowed: ["executor"] },
  {
    command: ["XREADGROUP", "GROUP", executorGroup, "probe", "COUNT", 1, "STREAMS", testStream, ">"],
    allowed: ["executor"],
  },
  {
    command: ["XAUTOCLAIM", testStream, executorGroup, "probe", 60_000, "0-0", "COUNT", 1],
    allowed: ["executor"],
  },
  { command: ["XACK", testStream, executorGroup, "0-1"], allowed: ["executor"] },
  { command: ["XDEL", testStream, "0-1"], allowed: ["executor"] },
  { command: ["XGROUP", "DESTROY", testStream, executorGroup], allowed: [] },
  { command: ["XRANGE", testStream, "-", "+"], allowed: [] },
  { command: ["DEL", testStream], allowed: [] },
  // The stream of tests with browser steps: the same rights as the other one.
  { command: ["XADD", testStreams.browser, "*", "dispatch", "x"], allowed: ["runs"] },
  {
    command: ["XGROUP", "CREATE", testStreams.browser, executorGroup, "0", "MKSTREAM"],
    allowed: ["executor"],
  },
  {
    command: ["XREADGROUP", "GROUP", executorGroup, "probe", "COUNT", 1, "STREAMS", testStreams.browser, ">"],
    allowed: ["executor"],
  },
  { command: ["XACK", testStreams.browser, executorGroup, "0-1"], allowed: ["executor"] },
  { command: ["XRANGE", testStreams.browser, "-", "+"], allowed: [] },
  { command: ["XADD", "testrun:tests:other", "*", "dispatch", "x"], allowed: [] },
  // What the executors report of the kinds of test they take: kept by the runs service alone.
  { command: ["HSET", executorKindsKey, "pod-1", "{}"], allowed: ["runs"] },
  { command: ["HGETALL", executorKindsKey], allowed: ["runs"] },
  { command: ["HDEL", executorKindsKey, "pod-1"], allowed: ["runs"] },
  { command: ["HLEN", executorKindsKey], allowed: ["runs"] },
  { command: ["HEXISTS", executorKindsKey, "pod-1"], allowed: ["runs"] },
  { command: ["SET", executorKindsKey, "x"], allowed: [] },
  // Run change notices: the runs service alone, and only on its channel.
  { command: ["PUBLISH", runChangesChannel, "run_x"], allowed: ["runs"] },
  // The access epoch: the catalog starts new ones, the runs service reads it.
  { command: ["SET", accessEpochKey, "e"], allowed: ["catalog"] },
  { command: ["GET", accessEpochKey], allowed: ["runs"] },
  { command: ["PUBLISH", "another:channel", "x"], allowed: [] },
  // Nothing else, and nothing of an administrator.
  { command: ["GET", "another:key"], allowed: [] },
  { command: ["KEYS", "*"], allowed: [] },
  { command: ["SCAN", 0], allowed: [] },
  { command: ["FLUSHALL"], allowed: [] },
  { command: ["CONFIG", "GET", "requirepass"], allowed: [] },
  { command: ["ACL", "LIST"], allowed: [] },
  { command: ["CLIENT", "LIST"], allowed: [] },
];

/** Runs a command as a component: "NOPERM" when Redis refused it, else "ran" (whatever it answered). */
async function attempt(url: string, command: (string | number)[]): Promise<"NOPERM" | "ran"> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.call(String(command[0]), ...command.slice(1));
    return "ran";
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("NOPERM")) return "NOPERM";
    // NOGROUP, BUSYGROUP, a wrong type: the command was let through.
    if (error instanceof Error && /^(NOGROUP|BUSYGROUP|WRONGTYPE|ERR)/.test(error.message)) return "ran";
    throw error;
  } finally {
    redis.disconnect();
  }
}

/** Every probe as every component; says which outcomes differ from the table. */
async function mismatches(urlOf: (component: Component) => string): Promise<string[]> {
  const wrong: string[] = [];
  for (const { command, allowed } of probes) {
    for (const component of components) {
      const outcome = await attempt(urlOf(component), command);
      const expected = allowed.includes(component) ? "ran" : "NOPERM";
      if (outcome !== expected) wrong.push(`${component} ${command.slice(0, 3).join(" ")}: ${outcome}`);
    }
  }
  return wrong;
}

/** A subscription as a component: whether Redis let it subscribe to the channel. */
async function subscribes(url: string, channel: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.subscribe(channel);
    return true;
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("NOPERM")) return false;
    throw error;
  } finally {
    redis.disconnect();
  }
}

describe("Redis users of the components", () => {
  let server: ThrowawayServer;
  beforeEach(async () => {
    // A server of its own: the refusals probed here must not reach the ACL LOG that
    // test/global-setup.ts checks for refusals of the system's own calls.
    server = await startThrowawayRedis();
  });
  afterEach(() => server?.stop());

  it("are the registry's: every service whose config reads REDIS_URL, and no one else", () => {
    expect(redisUsers.map((user) => user.component).sort()).to.deep.equal([...components].sort());
    expect(redisUsers.map((user) => user.user).sort()).to.deep.equal(
      components.map((component) => `testrun-${component}`).sort(),
    );
  });

  describe("as the tests and `make run` create them (ACL SETUSER through the admin URL)", () => {
    it("let each component do only what its code does: an executor cannot read or write the key cache or the gateway's counters", async () => {
      await createRedisUsers(server.url, redisUsers);
      expect(await mismatches((component) => componentRedisUrl(server.url, component))).to.deep.equal([]);
      expect(await subscribes(componentRedisUrl(server.url, "runs"), runChangesChannel)).to.equal(true);
      expect(await subscribes(componentRedisUrl(server.url, "runs"), "another:channel")).to.equal(false);
      expect(await subscribes(componentRedisUrl(server.url, "executor"), runChangesChannel)).to.equal(false);
    });

    it("refuse a wrong password, and creating them again changes no password", async () => {
      await createRedisUsers(server.url, redisUsers);
      const url = new URL(componentRedisUrl(server.url, "executor"));
      await createRedisUsers(server.url, redisUsers);
      expect(await attempt(url.toString(), ["PING"])).to.equal("ran");
      const redis = new Redis(server.url);
      try {
        const refused = await redis.call("AUTH", url.username, "not-the-password").then(
          () => undefined,
          (error: unknown) => error as Error,
        );
        expect(refused?.message).to.match(/^WRONGPASS/);
        expect(await redis.call("AUTH", url.username, decodeURIComponent(url.password))).to.equal("OK");
      } finally {
        redis.disconnect();
      }
    });
  });

  describe("as the chart's Redis defines them (templates/redis.yaml, the generated Secret)", () => {
    let objects: K8sObject[];
    before(async () => {
      objects = await renderChart(`${repoRoot}helm/testrun`, { release: "acl", namespace: "testrun" });
    });

    it("let each component, connecting with its REDIS_URL_<NAME>, do only what its code does", async () => {
      const secret = objects.find((o) => o.kind === "Secret") as (K8sObject & ISecret) | undefined;
      const data = Object.fromEntries(
        Object.entries(secret?.data ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value, "base64").toString(),
        ]),
      );
      const redis = objects.find((o) => o.kind === "StatefulSet" && o.metadata.name === "acl-testrun-redis");
      const spec = redis?.spec as { template?: { spec?: { containers?: IContainer[] } } } | undefined;
      const container = spec?.template?.spec?.containers?.[0];
      expect(container?.args, "the Redis container's args").to.be.an("array");
      // What Kubernetes does with $(VAR) in args: the container's variables, here from the Secret.
      const variables = Object.fromEntries(
        (container?.env ?? []).map((v) => [v.name, data[v.valueFrom?.secretKeyRef?.key ?? ""] ?? ""]),
      );
      const args = (container?.args ?? []).map((arg) =>
        arg.replace(/\$\(([A-Z_]+)\)/g, (_, name: string) => variables[name] ?? ""),
      );
      // Each `--user` directive is what ACL SETUSER takes (redis-server loads both alike).
      const directives: string[][] = [];
      for (const arg of args) {
        if (arg === "--user") directives.push([]);
        else if (arg.startsWith("--")) directives.push(["not a user"]);
        else directives.at(-1)?.push(arg);
      }
      const users = directives.filter((d) => d[0] !== "not a user");
      expect(users.map((d) => d[0]).sort()).to.deep.equal(redisUsers.map((user) => user.user).sort());
      const admin = new Redis(server.url);
      try {
        for (const directive of users) await admin.call("ACL", "SETUSER", ...(directive as [string]));
      } finally {
        admin.disconnect();
      }
      const local = new URL(server.url);
      const urlOf = (component: Component) => {
        const url = new URL(String(data[`REDIS_URL_${component.toUpperCase()}`]));
        expect(url.username, `REDIS_URL_${component.toUpperCase()}`).to.equal(`testrun-${component}`);
        url.host = local.host;
        return url.toString();
      };
      expect(await mismatches(urlOf)).to.deep.equal([]);
    });
  });
});
