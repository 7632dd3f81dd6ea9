// The verified-key cache as an attacker with write access to Redis would use it (an executor before
// it had a Redis user of its own, or anyone else holding a Redis password): the gateway trusts only
// entries the keys service sealed with KEY_CACHE_SECRET, and verifies any other with the keys
// service. Real catalog, keys and gateway processes, each connecting to Redis as its own user; the
// forged entries are written with the administrator's connection.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { CatalogService, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
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
import { call, expectError } from "./support.js";

describe("gateway and forged key-cache entries (catalog, keys and gateway as processes)", function () {
  this.timeout(60_000);
  const tokens = testTokens();
  const operator: Actor = create(ActorSchema, { kind: { case: "operator", value: { name: "seal test" } } });
  const processes: ServiceProcess[] = [];
  let gateway: GatewayProcess;
  let keys: Client<typeof KeysService>;
  let redis: Redis;
  let projectId = "";
  let otherProjectId = "";
  let memberId = "";
  let genuine = { keyId: "", secret: "" };

  const project = (secret: string) =>
    call(gateway.http, "/v1/project", { headers: { Authorization: `Bearer ${secret}` } });

  /** An entry the gateway would act on, for a project of the forger's choice. */
  const forgedEntry = (keyId: string): CachedKey => ({
    state: "valid",
    keyId,
    projectId: otherProjectId,
    creatorMemberId: memberId,
    keyCreatedAt: new Date().toISOString(),
    expiresAt: null,
  });

  before(async () => {
    const adminRedisUrl = String(process.env.REDIS_URL);
    const databaseUrl = await createMigratedTestDatabase(["catalog", "keys"]);
    const [keysPort, catalogPort] = [await findFreePort(), await findFreePort()];
    const keysUrl = `http://127.0.0.1:${keysPort}`;
    const catalogUrl = `http://127.0.0.1:${catalogPort}`;
    const keysEnv = {
      ...tokens,
      DATABASE_URL: databaseUrl,
      REDIS_URL: componentRedisUrl(adminRedisUrl, "keys"),
    };
    processes.push(
      await startServiceProcess("catalog", {
        ...tokens,
        DATABASE_URL: databaseUrl,
        PORT: String(catalogPort),
        KEYS_URL: keysUrl,
        REDIS_URL: componentRedisUrl(adminRedisUrl, "catalog"),
        VARIABLES_KEY: randomBytes(32).toString("base64"),
      }),
      await startServiceProcess("keys", { ...keysEnv, PORT: String(keysPort), CATALOG_URL: catalogUrl }),
    );
    gateway = await startGateway({
      ...tokens,
      REDIS_URL: componentRedisUrl(adminRedisUrl, "gateway"),
      KEYS_URL: keysUrl,
      CATALOG_URL: catalogUrl,
      // Each request comes from an address of its own (support.ts): refusals count per address.
      TRUST_PROXY_HOPS: "1",
    });
    processes.push(gateway);
    redis = new Redis(adminRedisUrl);

    const client = <S extends typeof CatalogService | typeof KeysService>(service: S, url: string) =>
      serviceClient(service, url, { token: tokens.SERVICE_TOKEN, timeoutMs: 30_000 });
    const catalog = client(CatalogService, catalogUrl);
    keys = client(KeysService, keysUrl);
    const { organization } = await catalog.createOrganization({
      actor: operator,
      name: "Forgery Inc",
      ownerEmail: "owner@forgery.example",
      ownerDisplayName: "Owner",
    });
    const organizationId = organization?.id ?? "";
    const { member } = await catalog.addMember({
      actor: operator,
      organizationId,
      email: "editor@forgery.example",
      displayName: "Editor",
      role: Role.EDITOR,
    });
    memberId = member?.id ?? "";
    for (const name of ["Shop", "Someone else's"]) {
      const { project: created } = await catalog.createProject({ actor: operator, organizationId, name });
      if (name === "Shop") projectId = created?.id ?? "";
      else otherProjectId = created?.id ?? "";
    }
    const { key, secret } = await keys.createKey({
      actor: operator,
      projectId,
      name: "ci",
      creatorMemberId: memberId,
    });
    genuine = { keyId: key?.id ?? "", secret };
  });

  after(async () => {
    redis?.disconnect();
    for (const child of processes.reverse()) await child.stop("SIGTERM");
  });

  it("answers a genuine key from the keys service's sealed entry", async () => {
    const answer = await project(genuine.secret);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect((answer.body.project as { id: string }).id).to.equal(projectId);
    const stored = await redis.get(keyCacheKey(fingerprintOf(genuine.secret)));
    expect(openKeyCacheEntry(tokens.KEY_CACHE_SECRET, fingerprintOf(genuine.secret), stored)).to.deep.include(
      {
        state: "valid",
        keyId: genuine.keyId,
        projectId,
      },
    );
  });

  it("refuses (401) a secret of the forger's choice, whatever entry was written for it without the secret", async () => {
    const genuineEntry = await redis.get(keyCacheKey(fingerprintOf(genuine.secret)));
    expect(genuineEntry, "the genuine key's entry, cached by the test above").to.be.a("string");
    const forgeries: Record<string, (fingerprint: string) => string> = {
      "an unsealed entry (the format of before the seal)": () => JSON.stringify(forgedEntry(genuine.keyId)),
      "an entry sealed with a secret of the forger's": (fingerprint) =>
        sealKeyCacheEntry(
          randomBytes(32).toString("base64url"),
          fingerprint,
          forgedEntry(genuine.keyId),
          Date.now() + 300_000,
        ),
      "a well-formed entry with a made-up MAC": (fingerprint) =>
        `${randomBytes(32).toString("base64url")}.${JSON.stringify({
          fingerprint,
          until: Date.now() + 300_000,
          entry: forgedEntry(genuine.keyId),
        })}`,
      "the genuine key's sealed entry, copied to the forger's fingerprint": () => String(genuineEntry),
    };
    for (const [what, forge] of Object.entries(forgeries)) {
      const secret = keyShapedSecret();
      const fingerprint = fingerprintOf(secret);
      await redis.set(keyCacheKey(fingerprint), forge(fingerprint), "EX", 60);
      const answer = await project(secret);
      expectError(answer, 401, "unauthorized");
      expect(answer.body.project, what).to.equal(undefined);
    }
    // The genuine key still works meanwhile.
    expect((await project(genuine.secret)).status).to.equal(200);
  });

  it("verifies a genuine key with the keys service when its entry was forged, and the entry is sealed again", async () => {
    const fingerprint = fingerprintOf(genuine.secret);
    const forgeries = [
      // Another project for the genuine key: would let it act where it has no rights.
      JSON.stringify(forgedEntry(genuine.keyId)),
      // A tombstone: an unsealed entry is not trusted to refuse either.
      JSON.stringify({ state: "revoked", keyId: genuine.keyId }),
    ];
    for (const forged of forgeries) {
      await redis.set(keyCacheKey(fingerprint), forged, "EX", 60);
      const answer = await project(genuine.secret);
      expect(answer.status, `${forged}: ${JSON.stringify(answer.body)}`).to.equal(200);
      expect((answer.body.project as { id: string }).id).to.equal(projectId);
      // VerifyKey replaced what it could not open with an entry of its own.
      const stored = await redis.get(keyCacheKey(fingerprint));
      expect(openKeyCacheEntry(tokens.KEY_CACHE_SECRET, fingerprint, stored)).to.deep.include({
        state: "valid",
        projectId,
      });
    }
  });
});
