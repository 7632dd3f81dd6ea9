import { randomBytes } from "node:crypto";
import type { DescService } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { CatalogService, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { KeyExpiry, KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import {
  type CachedKey,
  fingerprintOf,
  keyCacheKey,
  openKeyCacheEntry,
  sealKeyCacheEntry,
  serviceClient,
} from "@testrun/kit";
import {
  componentRedisUrl,
  createMigratedTestDatabase,
  findFreePort,
  type GatewayProcess,
  keyShapedSecret,
  type ServiceProcess,
  startGateway,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import pg from "pg";
import { type Answer, call, expectError, freshAddress, requestLogLine } from "./support.js";

/**
 * The gateway end to end: catalog, keys and two gateways as real processes on one database and
 * one Redis, everything created through the services' gRPC APIs with operator actors, and every
 * /v1 request sent over HTTP as a pipeline would.
 */
describe("gateway end to end (catalog, keys and two gateways as processes)", function () {
  this.timeout(120_000);
  const tokens = testTokens();
  const operator: Actor = create(ActorSchema, { kind: { case: "operator", value: { name: "gateway e2e" } } });
  /** Every secret (key secrets, variable values) that must never show up in a log line. */
  const secrets: string[] = [];
  const stopped: ServiceProcess[] = [];
  let databaseUrl: string;
  let catalogProcess: ServiceProcess;
  let keysProcess: ServiceProcess;
  let gateway: GatewayProcess;
  let secondGateway: GatewayProcess;
  let gatewayEnv: Record<string, string>;
  let catalog: Client<typeof CatalogService>;
  let keys: Client<typeof KeysService>;
  let redis: Redis;

  /** Project A: two environments, two plans, test cases with tags, a variable. */
  const a = {
    projectId: "",
    projectName: "",
    createdAt: "",
    envs: [] as string[],
    plans: [] as string[],
    cases: [] as string[],
  };
  /** Project B, same organization: only its own things. */
  const b = { projectId: "", envId: "", planId: "", caseId: "" };
  let orgId = "";
  let editorId = "";

  const client = <S extends DescService>(service: S, url: string) =>
    serviceClient(service, url, { token: tokens.SERVICE_TOKEN, timeoutMs: 30_000 });

  const step = {
    name: "call",
    kind: {
      case: "http" as const,
      value: { request: { method: "GET", path: "/" }, expect: { status: [200] } },
    },
  };

  const addMember = async (role: Role) => {
    const email = `m-${randomBytes(4).toString("hex")}@example.com`;
    const { member } = await catalog.addMember({
      actor: operator,
      organizationId: orgId,
      email,
      displayName: "M",
      role,
    });
    return { id: member?.id ?? "", email };
  };

  /** A new key of a project acting for `creator`; its secret joins the never-logged list. */
  const newKey = async (projectId: string, creator = editorId, expiry = KeyExpiry.DAYS_90) => {
    const { key, secret } = await keys.createKey({
      actor: operator,
      projectId,
      name: "ci",
      expiry,
      creatorMemberId: creator,
    });
    secrets.push(secret);
    return { id: key?.id ?? "", secret };
  };

  const bearer = (secret: string) => ({ headers: { Authorization: `Bearer ${secret}` } });
  const apiKey = (secret: string) => ({ headers: { "X-Api-Key": secret } });
  const get = (path: string, secret: string, via: GatewayProcess = gateway) =>
    call(via.http, path, bearer(secret));

  before(async () => {
    databaseUrl = await createMigratedTestDatabase(["catalog", "keys"]);
    const [keysPort, catalogPort] = [await findFreePort(), await findFreePort()];
    const keysUrl = `http://127.0.0.1:${keysPort}`;
    const catalogUrl = `http://127.0.0.1:${catalogPort}`;
    const variablesKey = randomBytes(32).toString("base64");
    secrets.push(variablesKey);
    // Each connects to Redis as its own user, as deployed (test/global-setup.ts made them).
    const adminRedisUrl = String(process.env.REDIS_URL);
    const common = {
      ...tokens,
      DATABASE_URL: databaseUrl,
      REDIS_URL: componentRedisUrl(adminRedisUrl, "keys"),
    };
    [catalogProcess, keysProcess] = await Promise.all([
      startServiceProcess("catalog", {
        ...common,
        PORT: String(catalogPort),
        KEYS_URL: keysUrl,
        REDIS_URL: componentRedisUrl(adminRedisUrl, "catalog"),
        VARIABLES_KEY: variablesKey,
      }),
      startServiceProcess("keys", { ...common, PORT: String(keysPort), CATALOG_URL: catalogUrl }),
    ]);
    gatewayEnv = {
      ...tokens,
      REDIS_URL: componentRedisUrl(adminRedisUrl, "gateway"),
      KEYS_URL: keysUrl,
      CATALOG_URL: catalogUrl,
      // Every request carries an X-Forwarded-For address of its own (support.ts).
      TRUST_PROXY_HOPS: "1",
    };
    [gateway, secondGateway] = await Promise.all([startGateway(gatewayEnv), startGateway(gatewayEnv)]);
    catalog = client(CatalogService, catalogUrl);
    keys = client(KeysService, keysUrl);
    redis = new Redis(adminRedisUrl);

    const { organization } = await catalog.createOrganization({
      actor: operator,
      name: "Acme",
      ownerEmail: "owner@example.com",
      ownerDisplayName: "Olga",
    });
    orgId = organization?.id ?? "";
    editorId = (await addMember(Role.EDITOR)).id;

    const { project } = await catalog.createProject({
      actor: operator,
      organizationId: orgId,
      name: "Shop",
      description: "",
    });
    a.projectId = project?.id ?? "";
    a.projectName = project?.name ?? "";
    a.createdAt = project?.createdAt ? timestampDate(project.createdAt).toISOString() : "";
    for (const [name, baseUrl, isDefault] of [
      ["staging", "https://staging.example.com", false],
      ["production", "https://www.example.com", true],
    ] as const) {
      const { environment } = await catalog.createEnvironment({
        actor: operator,
        projectId: a.projectId,
        name,
        baseUrl,
        isDefault,
      });
      a.envs.push(environment?.id ?? "");
    }
    const cases: [string, string[], boolean, number][] = [
      ["Login works", ["smoke", "Auth"], true, 2],
      ["Checkout with card", ["checkout"], true, 0],
      ["Login rejects a wrong password", ["auth"], false, 0],
      ["Search finds shoes", [], true, 0],
    ];
    for (const [name, tags, enabled, retries] of cases) {
      const { testCase } = await catalog.createTestCase({
        actor: operator,
        projectId: a.projectId,
        name,
        tags,
        enabled,
        steps: [step],
        retries,
      });
      a.cases.push(testCase?.id ?? "");
    }
    for (const [name, description, ids, retries] of [
      ["Smoke", "Fast checks before a deploy", [a.cases[0], a.cases[3]], 1],
      ["Everything", "", a.cases, undefined],
    ] as const) {
      const { testPlan } = await catalog.createTestPlan({
        actor: operator,
        projectId: a.projectId,
        name,
        description,
        testCaseIds: ids.map(String),
        retries,
      });
      a.plans.push(testPlan?.id ?? "");
    }
    const variableValue = `s3cret-${randomBytes(8).toString("hex")}`;
    secrets.push(variableValue);
    await catalog.createVariable({
      actor: operator,
      projectId: a.projectId,
      name: "PASSWORD",
      value: variableValue,
    });

    const other = await catalog.createProject({
      actor: operator,
      organizationId: orgId,
      name: "Blog",
      description: "",
    });
    b.projectId = other.project?.id ?? "";
    b.envId =
      (
        await catalog.createEnvironment({
          actor: operator,
          projectId: b.projectId,
          name: "staging",
          baseUrl: "https://blog.example.com",
          isDefault: true,
        })
      ).environment?.id ?? "";
    b.caseId =
      (
        await catalog.createTestCase({
          actor: operator,
          projectId: b.projectId,
          name: "Login works",
          tags: ["smoke"],
          steps: [step],
        })
      ).testCase?.id ?? "";
    b.planId =
      (
        await catalog.createTestPlan({
          actor: operator,
          projectId: b.projectId,
          name: "Smoke",
          description: "",
          testCaseIds: [b.caseId],
        })
      ).testPlan?.id ?? "";
  });

  after(async () => {
    redis?.disconnect();
    const processes = [gateway, secondGateway, catalogProcess, keysProcess, ...stopped];
    await Promise.all(processes.map((p) => p?.stop("SIGKILL")));
  });

  describe("reads", () => {
    const rfc3339Millis = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    const environments = () => [
      { id: a.envs[0], name: "staging", baseUrl: "https://staging.example.com", isDefault: false },
      { id: a.envs[1], name: "production", baseUrl: "https://www.example.com", isDefault: true },
    ];
    const testPlans = () => [
      {
        id: a.plans[0],
        name: "Smoke",
        description: "Fast checks before a deploy",
        testCaseCount: 2,
        retries: 1,
      },
      { id: a.plans[1], name: "Everything", description: "", testCaseCount: 4, retries: null },
    ];
    const testCases = () => [
      { id: a.cases[0], name: "Login works", tags: ["smoke", "Auth"], enabled: true, retries: 2 },
      { id: a.cases[1], name: "Checkout with card", tags: ["checkout"], enabled: true, retries: 0 },
      { id: a.cases[2], name: "Login rejects a wrong password", tags: ["auth"], enabled: false, retries: 0 },
      { id: a.cases[3], name: "Search finds shoes", tags: [], enabled: true, retries: 0 },
    ];

    it("GET /v1/project returns the project, its environments and its test plans, with either header", async () => {
      const { secret } = await newKey(a.projectId);
      for (const auth of [bearer(secret), apiKey(secret)]) {
        const answer = await call(gateway.http, "/v1/project", auth);
        expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
        expect(answer.body).to.deep.equal({
          project: { id: a.projectId, name: a.projectName, createdAt: a.createdAt },
          environments: environments(),
          testPlans: testPlans(),
        });
        expect((answer.body.project as { createdAt: string }).createdAt).to.match(rfc3339Millis);
      }
    });

    it("GET /v1/environments, /v1/test-plans and /v1/test-cases return the project's items oldest first, with either header", async () => {
      const { secret } = await newKey(a.projectId);
      for (const auth of [bearer(secret), apiKey(secret)]) {
        const envs = await call(gateway.http, "/v1/environments", auth);
        expect(envs.status).to.equal(200);
        expect(envs.body).to.deep.equal({ environments: environments() });
        const plans = await call(gateway.http, "/v1/test-plans", auth);
        expect(plans.status).to.equal(200);
        expect(plans.body).to.deep.equal({ testPlans: testPlans() });
        const cases = await call(gateway.http, "/v1/test-cases", auth);
        expect(cases.status).to.equal(200);
        expect(cases.body).to.deep.equal({ testCases: testCases(), truncated: false });
      }
    });

    it("filters test cases: tag repeatable and case-insensitive, search a case-insensitive substring, both with AND", async () => {
      const { secret } = await newKey(a.projectId);
      const ids = async (query: string) => {
        const answer = await get(`/v1/test-cases?${query}`, secret);
        expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
        return (answer.body.testCases as { id: string }[]).map((c) => c.id);
      };
      expect(await ids("tag=AUTH")).to.deep.equal([a.cases[0], a.cases[2]]);
      expect(await ids("tag=smoke&tag=checkout")).to.deep.equal([a.cases[0], a.cases[1]]);
      expect(await ids("search=LOGIN")).to.deep.equal([a.cases[0], a.cases[2]]);
      expect(await ids("search=card")).to.deep.equal([a.cases[1]]);
      expect(await ids("tag=auth&search=password")).to.deep.equal([a.cases[2]]);
      expect(await ids("tag=nothing")).to.deep.equal([]);
      expect(await ids(`search=${encodeURIComponent("with c")}`)).to.deep.equal([a.cases[1]]);
    });

    it("carries RateLimit-Limit, -Remaining and -Reset on every keyed response", async () => {
      const { secret } = await newKey(a.projectId);
      const remaining: number[] = [];
      for (const path of ["/v1/project", "/v1/environments", "/v1/test-plans", "/v1/test-cases"]) {
        const answer = await get(path, secret);
        expect(answer.headers.get("ratelimit-limit")).to.equal("60");
        expect(Number(answer.headers.get("ratelimit-reset"))).to.be.within(1, 60);
        remaining.push(Number(answer.headers.get("ratelimit-remaining")));
      }
      expect(remaining).to.deep.equal([59, 58, 57, 56]);
    });

    it("does not count GET /v1/openapi.json against the key's rate limit, even when the key is sent", async () => {
      const { secret } = await newKey(a.projectId);
      const first = await get("/v1/environments", secret);
      for (let i = 0; i < 3; i++) expect((await get("/v1/openapi.json", secret)).status).to.equal(200);
      const second = await get("/v1/environments", secret);
      expect(Number(first.headers.get("ratelimit-remaining")) - 1).to.equal(
        Number(second.headers.get("ratelimit-remaining")),
      );
    });

    it("logs each request with its request id, key and project", async () => {
      const key = await newKey(a.projectId);
      const answer = await get("/v1/environments", key.secret);
      const requestId = String(answer.headers.get("x-request-id"));
      const line = await gateway.waitForLine((l) => l.includes(requestId) && l.includes('"msg":"request"'));
      expect(JSON.parse(line)).to.include({ requestId, status: 200, keyId: key.id, projectId: a.projectId });
    });
  });

  describe("test case list bound", () => {
    let projectId = "";
    const created: string[] = [];

    before(async () => {
      const { project } = await catalog.createProject({
        actor: operator,
        organizationId: orgId,
        name: "Big",
        description: "",
      });
      projectId = project?.id ?? "";
      for (let i = 0; i < 501; i++) {
        const tags = i < 400 ? ["bulk"] : ["tail"];
        const { testCase } = await catalog.createTestCase({
          actor: operator,
          projectId,
          name: `Case ${i}`,
          tags,
          steps: [step],
        });
        created.push(testCase?.id ?? "");
      }
    });

    it("returns the 500 oldest of 501 test cases with truncated true", async () => {
      const { secret } = await newKey(projectId);
      const answer = await get("/v1/test-cases", secret);
      expect(answer.status).to.equal(200);
      const ids = (answer.body.testCases as { id: string }[]).map((c) => c.id);
      expect(ids).to.deep.equal(created.slice(0, 500));
      expect(answer.body.truncated).to.equal(true);
    });

    it("says truncated false when the filters leave 500 or fewer", async () => {
      const { secret } = await newKey(projectId);
      const bulk = await get("/v1/test-cases?tag=BULK", secret);
      expect((bulk.body.testCases as unknown[]).length).to.equal(400);
      expect(bulk.body.truncated).to.equal(false);
      const both = await get("/v1/test-cases?tag=bulk&tag=tail", secret);
      expect((both.body.testCases as unknown[]).length).to.equal(500);
      expect(both.body.truncated).to.equal(true);
      const searched = await get("/v1/test-cases?search=case%2050", secret);
      expect((searched.body.testCases as { name: string }[]).map((c) => c.name)).to.deep.equal([
        "Case 50",
        "Case 500",
      ]);
      expect(searched.body.truncated).to.equal(false);
    });
  });

  describe("keys that do not work", () => {
    it("answers 401 unauthorized to a missing key and to an unknown key in either header", async () => {
      expectError(await call(gateway.http, "/v1/project"), 401, "unauthorized");
      const unknown = keyShapedSecret();
      expectError(await call(gateway.http, "/v1/project", bearer(unknown)), 401, "unauthorized");
      expectError(await call(gateway.http, "/v1/test-cases", apiKey(unknown)), 401, "unauthorized");
    });

    it("answers 401 key_expired to a key past its expiry time", async () => {
      const key = await newKey(a.projectId, editorId, KeyExpiry.DAYS_30);
      // Thirty days cannot pass in a test: move the key's creation and expiry into the past.
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      await db.query(
        "update keys.api_keys set created_at = now() - interval '31 days', expires_at = now() - interval '1 day' where id = $1",
        [key.id],
      );
      await db.end();
      const answer = await get("/v1/project", key.secret);
      expectError(answer, 401, "key_expired");
      expect(answer.headers.has("ratelimit-limit")).to.equal(false);
    });

    it("answers 401 key_expired when a cached key reaches its expiry time", async () => {
      const key = await newKey(a.projectId, editorId, KeyExpiry.DAYS_30);
      expect((await get("/v1/environments", key.secret)).status).to.equal(200);
      // The keys service cached the key; let its expiry time come while the entry still lives.
      const fingerprint = fingerprintOf(key.secret);
      const cacheKey = keyCacheKey(fingerprint);
      const entry = openKeyCacheEntry(tokens.KEY_CACHE_SECRET, fingerprint, await redis.get(cacheKey));
      expect(entry).to.include({ state: "valid", keyId: key.id, projectId: a.projectId });
      // Sealed as the keys service would have, had the key's expiry been a second ago.
      const expired = { ...entry, expiresAt: new Date(Date.now() - 1000).toISOString() } as CachedKey;
      await redis.set(
        cacheKey,
        sealKeyCacheEntry(tokens.KEY_CACHE_SECRET, fingerprint, expired, Date.now() + 60_000),
        "KEEPTTL",
      );
      expectError(await get("/v1/environments", key.secret), 401, "key_expired");
    });

    it("answers 401 to the very next request after a revocation, on every gateway", async () => {
      const key = await newKey(a.projectId);
      expect((await get("/v1/project", key.secret, gateway)).status).to.equal(200);
      expect((await get("/v1/project", key.secret, secondGateway)).status).to.equal(200);
      await keys.revokeKey({ actor: operator, projectId: a.projectId, keyId: key.id });
      expectError(await get("/v1/project", key.secret, gateway), 401, "unauthorized");
      expectError(await get("/v1/test-cases", key.secret, secondGateway), 401, "unauthorized");
    });

    it("kills a key for good when its creator is made Viewer, even after they are Editor again; a new key works", async () => {
      const creator = await addMember(Role.EDITOR);
      const old = await newKey(a.projectId, creator.id);
      expect((await get("/v1/test-plans", old.secret)).status).to.equal(200);

      await catalog.changeMemberRole({ actor: operator, memberId: creator.id, role: Role.VIEWER });
      const refused = await get("/v1/test-plans", old.secret);
      expectError(refused, 403, "forbidden");
      const start = await call(gateway.http, "/v1/runs", {
        method: "POST",
        headers: { Authorization: `Bearer ${old.secret}`, "Content-Type": "application/json" },
        body: JSON.stringify({ testPlan: "Smoke" }),
      });
      expectError(start, 403, "forbidden");
      expect(start.body.error).to.equal("the key's creator can no longer start runs");

      await catalog.changeMemberRole({ actor: operator, memberId: creator.id, role: Role.EDITOR });
      for (const endpoint of ["/v1/project", "/v1/environments", "/v1/test-plans", "/v1/test-cases"]) {
        expectError(await get(endpoint, old.secret), 403, "forbidden");
        expectError(await get(endpoint, old.secret, secondGateway), 403, "forbidden");
      }
      const fresh = await newKey(a.projectId, creator.id);
      expect((await get("/v1/project", fresh.secret)).status).to.equal(200);
    });

    it("kills a key for good when its creator is removed, even after they rejoin; a new key works", async () => {
      const creator = await addMember(Role.ADMIN);
      const old = await newKey(a.projectId, creator.id);
      // Never used before the removal, so nothing is cached: the keys service itself refuses it.
      await catalog.removeMember({ actor: operator, memberId: creator.id });
      expectError(await get("/v1/environments", old.secret), 403, "forbidden");
      await catalog.addMember({
        actor: operator,
        organizationId: orgId,
        email: creator.email,
        displayName: "M",
        role: Role.ADMIN,
      });
      expectError(await get("/v1/environments", old.secret), 403, "forbidden");
      const fresh = await newKey(a.projectId, creator.id);
      expect((await get("/v1/environments", fresh.secret)).status).to.equal(200);
    });
  });

  describe("projects", () => {
    it("a key reads only its own project: nothing of another project appears on any endpoint", async () => {
      const keyA = await newKey(a.projectId);
      const keyB = await newKey(b.projectId);
      const bIds = [b.projectId, b.envId, b.planId, b.caseId];
      for (const endpoint of ["/v1/project", "/v1/environments", "/v1/test-plans", "/v1/test-cases"]) {
        const answer = await get(endpoint, keyA.secret);
        expect(answer.status).to.equal(200);
        for (const id of bIds) expect(JSON.stringify(answer.body), endpoint).not.to.contain(id);
      }
      const project = await get("/v1/project", keyB.secret);
      expect((project.body.project as { id: string }).id).to.equal(b.projectId);
      expect((project.body.environments as { id: string }[]).map((e) => e.id)).to.deep.equal([b.envId]);
      expect((project.body.testPlans as { id: string }[]).map((p) => p.id)).to.deep.equal([b.planId]);
      const cases = await get("/v1/test-cases", keyB.secret);
      expect((cases.body.testCases as { id: string }[]).map((c) => c.id)).to.deep.equal([b.caseId]);
    });
  });

  describe("rate limit", () => {
    it("is shared by two gateway processes: the 61st request within a minute gets 429 with Retry-After", async () => {
      const { secret } = await newKey(a.projectId);
      const answers: Answer[] = [];
      for (let i = 0; i < 61; i++) {
        answers.push(await get("/v1/environments", secret, i % 2 ? secondGateway : gateway));
      }
      expect(answers.slice(0, 60).map((answer) => answer.status)).to.deep.equal(Array(60).fill(200));
      expect(
        answers.slice(0, 60).map((answer) => Number(answer.headers.get("ratelimit-remaining"))),
      ).to.deep.equal(Array.from({ length: 60 }, (_, i) => 59 - i));
      const refused = answers[60] as Answer;
      expectError(refused, 429, "rate_limited");
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
        String(retryAfter),
      ).to.equal(true);
      expect(refused.headers.get("ratelimit-limit")).to.equal("60");
      expect(refused.headers.get("ratelimit-remaining")).to.equal("0");
      // Another key has its own budget.
      expect(
        (await get("/v1/environments", (await newKey(a.projectId)).secret, secondGateway)).status,
      ).to.equal(200);
    });
  });

  describe("failed authentications per address, and keys that are real", () => {
    const failuresPerMinute = 20; // the default of AUTH_FAILURES_PER_MINUTE
    const knownMark = (secret: string) => `testrun:gateway:known:${fingerprintOf(secret)}`;
    const fromAddress = (address: string, secret: string, via: GatewayProcess = gateway) =>
      call(via.http, "/v1/environments", { address, ...bearer(secret) });
    /** Others behind the same address use up its failures: requests without a key. */
    const block = async (address: string) => {
      for (let i = 0; i < failuresPerMinute; i++)
        expectError(await call(gateway.http, "/v1/environments", { address }), 401, "unauthorized");
      expectError(await call(gateway.http, "/v1/environments", { address }), 429, "rate_limited");
    };

    it("counts a secret it verifies before verifying it, and takes the count back when the key is valid", async () => {
      const address = freshAddress();
      const fresh = await newKey(a.projectId);
      expect((await fromAddress(address, fresh.secret)).status).to.equal(200);
      // Unknown secrets, verified by the keys service: the valid key's verification cost nothing.
      for (let i = 0; i < failuresPerMinute; i++)
        expectError(await fromAddress(address, keyShapedSecret()), 401, "unauthorized");
      expectError(await fromAddress(address, keyShapedSecret()), 429, "rate_limited");
    });

    it("lets a burst of parallel requests with a key never seen before through: one secret, counted once", async () => {
      const address = freshAddress();
      const { secret } = await newKey(a.projectId);
      // More parallel first uses than the address may fail, as a pipeline's parallel jobs make.
      const burst = await Promise.all(
        Array.from({ length: failuresPerMinute + 10 }, () => fromAddress(address, secret)),
      );
      expect(
        burst.map((answer) => answer.status),
        JSON.stringify(burst.find((answer) => answer.status !== 200)?.body),
      ).to.deep.equal(burst.map(() => 200));
      // And it cost the address nothing: its failures are all still there for guesses.
      for (let i = 0; i < failuresPerMinute; i++)
        expectError(await fromAddress(address, keyShapedSecret()), 401, "unauthorized");
      expectError(await fromAddress(address, keyShapedSecret()), 429, "rate_limited");
    });

    it("has one secret verified at most RATE_LIMIT_PER_MINUTE times a minute, however parallel the burst", async () => {
      const address = freshAddress();
      const secret = keyShapedSecret();
      const burst = await Promise.all(Array.from({ length: 100 }, () => fromAddress(address, secret)));
      const statuses = burst.map((answer) => answer.status);
      // The default per-key limit is 60: beyond it, refused before the keys service is asked.
      expect(statuses.filter((status) => status === 401).length, String(statuses)).to.be.at.most(60);
      expect(statuses.filter((status) => status === 429).length, String(statuses)).to.be.at.least(40);
      for (const answer of burst.filter((answer) => answer.status === 429))
        expectError(answer, 429, "rate_limited");
    });

    it("never refuses a key in the cache for its address's failures, on any gateway", async () => {
      const address = freshAddress();
      const { secret } = await newKey(a.projectId);
      expect((await get("/v1/environments", secret)).status).to.equal(200);
      await block(address);
      for (const via of [gateway, secondGateway]) {
        const answer = await fromAddress(address, secret, via);
        expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      }
    });

    it("lets a key verified before through from a blocked address after its cache entry is gone", async () => {
      const address = freshAddress();
      const { secret } = await newKey(a.projectId);
      expect((await get("/v1/environments", secret)).status).to.equal(200);
      // A cache entry lives minutes (validEntryTtlSeconds); the gateway remembers the key far longer.
      await redis.del(keyCacheKey(fingerprintOf(secret)));
      await block(address);
      const answer = await fromAddress(address, secret);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(await redis.exists(keyCacheKey(fingerprintOf(secret))), "cached again").to.equal(1);
    });

    it("holds a key never seen before at a blocked address like any unknown secret, until it is seen", async () => {
      const address = freshAddress();
      const { secret } = await newKey(a.projectId);
      await block(address);
      // Nothing tells it from a guess without asking the keys service, which the limit protects.
      expectError(await fromAddress(address, secret), 429, "rate_limited");
      expect((await get("/v1/environments", secret)).status).to.equal(200);
      await redis.del(keyCacheKey(fingerprintOf(secret)));
      expect((await fromAddress(address, secret)).status).to.equal(200);
    });

    it("forgets a known key once the keys service refuses it: a blocked address then cannot have it verified", async () => {
      const address = freshAddress();
      const key = await newKey(a.projectId);
      expect((await get("/v1/environments", key.secret)).status).to.equal(200);
      expect(await redis.exists(knownMark(key.secret))).to.equal(1);
      await keys.revokeKey({ actor: operator, projectId: a.projectId, keyId: key.id });
      // Its tombstone gone too: only the keys service can say what the key is.
      await redis.del(keyCacheKey(fingerprintOf(key.secret)));
      expectError(await fromAddress(freshAddress(), key.secret), 401, "unauthorized");
      expect(await redis.exists(knownMark(key.secret)), "still marked known").to.equal(0);
      await redis.del(keyCacheKey(fingerprintOf(key.secret)));
      await block(address);
      expectError(await fromAddress(address, key.secret), 429, "rate_limited");
    });
  });

  describe("last use", () => {
    it("reports uses served from the cache to the keys service, at the latest when the gateway stops", async () => {
      const thirdGateway = await startGateway(gatewayEnv);
      stopped.push(thirdGateway);
      const key = await newKey(a.projectId);
      expect((await get("/v1/environments", key.secret, thirdGateway)).status).to.equal(200);
      // The keys service keeps last use to within a minute: let the first use be an hour old.
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      await db.query("update keys.api_keys set last_used_at = now() - interval '1 hour' where id = $1", [
        key.id,
      ]);
      await db.end();
      const afterFirstUse = new Date();
      expect((await get("/v1/environments", key.secret, thirdGateway)).status).to.equal(200);
      expect(await thirdGateway.stop("SIGTERM")).to.equal(0);
      const { keys: listed } = await keys.listKeys({ actor: operator, projectId: a.projectId });
      const lastUsed = listed.find((k) => k.id === key.id)?.lastUsedAt;
      expect(lastUsed, "last_used_at").to.not.equal(undefined);
      expect(timestampDate(lastUsed as NonNullable<typeof lastUsed>).getTime()).to.be.at.least(
        afterFirstUse.getTime(),
      );
    });
  });

  describe("secrets", () => {
    it("answers a real key pasted in place of a run id 404 and logs the path with the key replaced", async () => {
      const key = await newKey(a.projectId);
      const answer = await get(`/v1/runs/${key.secret}`, key.secret);
      expectError(answer, 404, "not_found");
      expect(await requestLogLine(gateway, answer)).to.include({ path: "/v1/runs/trk_[redacted]" });
      // The test below then finds the secret in no process's output.
    });

    it("no key secret, variable value or variables key appears in any process's log lines", () => {
      const processes = [gateway, secondGateway, catalogProcess, keysProcess, ...stopped];
      expect(secrets.length).to.be.greaterThan(10);
      for (const process of processes) {
        const output = process.output().join("\n");
        expect(output.length, process.name).to.be.greaterThan(0);
        for (const secret of secrets)
          expect(output, `${process.name} logged a secret`).not.to.contain(secret);
      }
    });
  });
});
