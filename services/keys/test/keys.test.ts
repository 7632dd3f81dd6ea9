import { createHash, randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { CatalogService, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import {
  type ApiKey,
  KeyExpiry,
  KeyKind,
  KeyState,
  KeysService,
  KeyUseSchema,
  VerifyKeyResult,
} from "@testrun/gen/testrun/keys/v1/keys_pb";
import {
  connectRedis,
  fingerprintOf,
  keyCacheKey,
  loadConfig,
  newId,
  openKeyCacheEntry,
  sealKeyCacheEntry,
  tombstoneTtlSeconds,
  validEntryTtlSeconds,
} from "@testrun/kit";
import {
  type CapturedLogger,
  capturedLogger,
  componentRedisUrl,
  type InProcessCatalog,
  type InProcessRpc,
  inProcessRpc,
  migratedTestDatabase,
  startInProcessCatalog,
  startThrowawayRedis,
  type ThrowawayServer,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import pg from "pg";
import { base62Alphabet, checksumOf } from "../src/secret.js";

const day = 86_400_000;

/** The fields of a CreateKeyRequest a test sets. */
interface CreateFields {
  actor?: Actor | undefined;
  projectId?: string;
  name?: string;
  expiry?: KeyExpiry;
  creatorMemberId?: string;
  kind?: KeyKind;
}

const operator = (): Actor =>
  create(ActorSchema, { kind: { case: "operator", value: { name: "keys test" } } });
const member = (id: string): Actor => create(ActorSchema, { kind: { case: "memberId", value: id } });

/**
 * The keys service wired as main.ts wires it, served by `rpc` (in-process, docs/development.md,
 * "Tests"); `stop` ends it as its shutdown would.
 */
async function serveKeys(
  rpc: InProcessRpc,
  env: Record<string, string>,
  catalog: Client<typeof CatalogService>,
  log: CapturedLogger,
): Promise<{ stop(): Promise<void> }> {
  // By import(), as @testrun/testing loads the catalog: the kit's copy of MikroORM.
  const { configSchema, database, wireKeys } = await import("../src/wiring.js");
  const config = loadConfig(configSchema, env);
  const { orm } = await migratedTestDatabase(database, config.DATABASE_URL);
  const redis = await connectRedis(config.REDIS_URL);
  const wired = wireKeys({ config, orm, redis, logger: log.logger, catalog });
  rpc.serve(...wired.services);
  return {
    async stop() {
      await wired.stop();
      redis.disconnect();
      await orm.close();
    },
  };
}

/** The ConnectError a call failed with; fails the test when it succeeded or the code differs. */
async function rejects(call: Promise<unknown>, code: Code): Promise<ConnectError> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => ConnectError.from(error),
  );
  expect(outcome, `expected ${Code[code]}, but the call succeeded`).to.be.instanceOf(ConnectError);
  const error = outcome as ConnectError;
  expect(Code[error.code], error.rawMessage).to.equal(Code[code]);
  return error;
}

const ms = (stamp: Timestamp | undefined) => (stamp ? timestampDate(stamp).getTime() : undefined);

/** A secret of the right shape (prefix, alphabet, checksum) that was never issued. */
function unissuedSecret(): string {
  const random = Array.from(randomBytes(40), (b) => base62Alphabet[b % 62]).join("");
  return `trk_${random}${checksumOf(random)}`;
}

describe("keys service (keys and catalog in-process, real PostgreSQL and Redis)", () => {
  const tokens = testTokens();
  let rpc: InProcessRpc;
  // The most verbose level, so that the log check at the end sees everything the service can say.
  const keysLog = capturedLogger("keys", "trace");
  let keysService: { stop(): Promise<void> };
  let catalogService: InProcessCatalog;
  let keys: Client<typeof KeysService>;
  let catalog: Client<typeof CatalogService>;
  let db: pg.Client;
  let redis: Redis;
  /** What the keys service was wired with. */
  let keysEnv: Record<string, string>;
  /** Every secret handed out during the suite, to look for in the logs at the end. */
  const issued: string[] = [];
  /** Log lines of processes stopped before the end. */
  const stoppedLogs: string[] = [];

  let organizationId: string;
  let ownerId: string;
  let editorId: string;
  let viewerId: string;
  let projectId: string;
  let foreignProjectId: string;

  async function newMember(organizationId: string, role: Role): Promise<string> {
    const { member: added } = await catalog.addMember({
      actor: operator(),
      organizationId,
      email: `${Role[role].toLowerCase()}.${randomBytes(4).toString("hex")}@example.com`,
      displayName: `A ${Role[role].toLowerCase()}`,
      role,
    });
    return added?.id ?? "";
  }

  async function newOrganization(): Promise<{ organizationId: string; ownerId: string }> {
    const { organization, owner } = await catalog.createOrganization({
      actor: operator(),
      name: `org ${randomBytes(4).toString("hex")}`,
      ownerEmail: `owner.${randomBytes(4).toString("hex")}@example.com`,
      ownerDisplayName: "Olga Owner",
    });
    return { organizationId: organization?.id ?? "", ownerId: owner?.id ?? "" };
  }

  async function newProject(organizationId: string): Promise<string> {
    const { project } = await catalog.createProject({
      actor: operator(),
      organizationId,
      name: `project ${randomBytes(4).toString("hex")}`,
    });
    return project?.id ?? "";
  }

  /** Creates a key (by default: the editor's, in the main project) and remembers its secret. */
  async function createKey(fields: CreateFields = {}): Promise<{ key: ApiKey; secret: string }> {
    const response = await keys.createKey({
      actor: member(editorId),
      projectId,
      name: "ci pipeline",
      ...fields,
    });
    issued.push(response.secret);
    if (!response.key) throw new Error("CreateKey answered without a key");
    return { key: response.key, secret: response.secret };
  }

  /** The entry the gateway would trust: sealed with the keys service's KEY_CACHE_SECRET. */
  const cacheEntry = async (secret: string) =>
    openKeyCacheEntry(
      tokens.KEY_CACHE_SECRET,
      fingerprintOf(secret),
      await redis.get(keyCacheKey(fingerprintOf(secret))),
    );

  async function storedRow(keyId: string): Promise<Record<string, unknown>> {
    const { rows } = await db.query("select *, xmin::text as version from keys.api_keys where id = $1", [
      keyId,
    ]);
    expect(rows, `row of ${keyId}`).to.have.length(1);
    return rows[0];
  }

  before(async function () {
    this.timeout(60_000);
    // Both on one router transport: each calls the other (CheckAccess; the catalog telling the keys
    // service when a member loses rights) in-process, with the service token.
    rpc = inProcessRpc({
      tokens: { service: tokens.SERVICE_TOKEN, executor: tokens.EXECUTOR_TOKEN },
      logger: keysLog.logger,
    });
    keys = rpc.client(KeysService, tokens.SERVICE_TOKEN);
    catalog = rpc.client(CatalogService, tokens.SERVICE_TOKEN);
    catalogService = await startInProcessCatalog({}, { rpc, tokens, keys });
    keysEnv = {
      ...tokens,
      DATABASE_URL: catalogService.env.DATABASE_URL ?? "",
      // As deployed: the keys service's own Redis user (test/global-setup.ts made it).
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "keys"),
      LOG_LEVEL: "trace",
    };
    keysService = await serveKeys(rpc, keysEnv, catalog, keysLog);
    db = new pg.Client({ connectionString: keysEnv.DATABASE_URL });
    await db.connect();
    redis = new Redis(String(process.env.REDIS_URL));

    ({ organizationId, ownerId } = await newOrganization());
    editorId = await newMember(organizationId, Role.EDITOR);
    viewerId = await newMember(organizationId, Role.VIEWER);
    projectId = await newProject(organizationId);
    foreignProjectId = await newProject((await newOrganization()).organizationId);
  });

  after(async () => {
    await db?.end();
    redis?.disconnect();
    await keysService?.stop();
    await catalogService?.stop();
  });

  describe("CreateKey and ListKeys", () => {
    it("returns a secret of the documented format once; the list and the database never hold it", async () => {
      const before = Date.now();
      const { key, secret } = await createKey({ name: "  nightly pipeline  " });
      expect(secret).to.match(/^trk_[0-9A-Za-z]{46}$/);
      expect(secret.slice(44)).to.equal(checksumOf(secret.slice(4, 44)));
      expect(key.id).to.match(/^key_[0-9a-z]{26}$/);
      expect(key).to.deep.include({
        projectId,
        name: "nightly pipeline",
        displayPrefix: secret.slice(0, 12),
        creatorMemberId: editorId,
        state: KeyState.ACTIVE,
        expiry: KeyExpiry.DAYS_90,
      });
      const createdAt = ms(key.createdAt) ?? 0;
      expect(createdAt).to.be.within(before, Date.now());
      expect(ms(key.expiresAt)).to.equal(createdAt + 90 * day);
      expect(key.lastUsedAt).to.equal(undefined);

      const listed = await keys.listKeys({ actor: member(viewerId), projectId });
      const mine = listed.keys.find((k) => k.id === key.id);
      expect(mine).to.deep.include({ name: "nightly pipeline", displayPrefix: secret.slice(0, 12) });
      const wire = JSON.stringify(listed, (_, v) => (typeof v === "bigint" ? String(v) : v));
      expect(wire).not.to.include(secret.slice(12));

      // The database holds the SHA-256 fingerprint and the display prefix, nothing more of the secret.
      const row = await storedRow(key.id);
      expect(row.fingerprint).to.equal(createHash("sha256").update(secret).digest("hex"));
      expect(Object.values(row).map(String).join("|")).not.to.include(secret.slice(12));
    });

    it("sets the expiry chosen: 30 days, 1 year or never", async () => {
      const cases = [
        [KeyExpiry.DAYS_30, 30 * day],
        [KeyExpiry.DAYS_90, 90 * day],
        [KeyExpiry.YEAR_1, 365 * day],
      ] as const;
      for (const [expiry, lifetime] of cases) {
        const { key } = await createKey({ expiry });
        expect(key.expiry).to.equal(expiry);
        expect(ms(key.expiresAt)).to.equal((ms(key.createdAt) ?? 0) + lifetime);
      }
      const { key } = await createKey({ expiry: KeyExpiry.NEVER });
      expect(key.expiry).to.equal(KeyExpiry.NEVER);
      expect(key.expiresAt).to.equal(undefined);
    });

    it("lists the project's keys oldest first, to any member and operators, hiding revoked ones unless asked", async () => {
      const first = await createKey({ name: "first" });
      const second = await createKey({ name: "second" });
      await keys.revokeKey({ actor: member(editorId), projectId, keyId: first.key.id });

      const ids = (list: { keys: ApiKey[] }) => list.keys.map((k) => k.id);
      const byViewer = await keys.listKeys({ actor: member(viewerId), projectId });
      expect(ids(byViewer)).to.include(second.key.id).and.not.include(first.key.id);
      const all = await keys.listKeys({ actor: operator(), projectId, includeRevoked: true });
      expect(ids(all).indexOf(first.key.id)).to.be.below(ids(all).indexOf(second.key.id));
      const created = all.keys.map((k) => ms(k.createdAt) ?? 0);
      expect(created).to.deep.equal([...created].sort((a, b) => a - b));
      const revoked = all.keys.find((k) => k.id === first.key.id);
      expect(revoked?.state).to.equal(KeyState.REVOKED);
      expect(revoked?.revokedAt).not.to.equal(undefined);

      await rejects(keys.listKeys({ actor: member(editorId), projectId: foreignProjectId }), Code.NotFound);
      await rejects(keys.listKeys({ actor: operator(), projectId: newId("prj") }), Code.NotFound);
    });

    it("lets EDITORs and operators create keys, and nobody else", async () => {
      // An operator creates for a named EDITOR-or-above member.
      const { key } = await createKey({ actor: operator(), creatorMemberId: ownerId });
      expect(key.creatorMemberId).to.equal(ownerId);
      // A member may name itself.
      expect((await createKey({ creatorMemberId: editorId })).key.creatorMemberId).to.equal(editorId);

      const viewer = await rejects(
        keys.createKey({ actor: member(viewerId), projectId, name: "x" }),
        Code.PermissionDenied,
      );
      expect(viewer.rawMessage).to.match(/EDITOR/);
      await rejects(
        keys.createKey({ actor: operator(), projectId, name: "x", creatorMemberId: viewerId }),
        Code.PermissionDenied,
      );
      const apiKeyActor = create(ActorSchema, {
        kind: {
          case: "apiKey",
          value: { keyId: key.id, creatorMemberId: ownerId, projectId, keyCreatedAt: key.createdAt },
        },
      });
      await rejects(keys.createKey({ actor: apiKeyActor, projectId, name: "x" }), Code.PermissionDenied);
      // A member of another organization does not see the project at all.
      await rejects(
        keys.createKey({ actor: member(editorId), projectId: foreignProjectId, name: "x" }),
        Code.NotFound,
      );
      // An operator naming a creator from another organization.
      await rejects(
        keys.createKey({
          actor: operator(),
          projectId: foreignProjectId,
          name: "x",
          creatorMemberId: editorId,
        }),
        Code.PermissionDenied,
      );
      await rejects(
        keys.createKey({ actor: operator(), projectId: newId("prj"), name: "x", creatorMemberId: editorId }),
        Code.NotFound,
      );
    });

    it("refuses bad requests with INVALID_ARGUMENT, storing nothing", async () => {
      const { rows } = await db.query<{ n: string }>("select count(*) as n from keys.api_keys");
      const bad: [CreateFields, RegExp][] = [
        [{ actor: undefined }, /actor/],
        [{ projectId: "" }, /project_id/],
        [{ name: "   " }, /name/],
        [{ name: "x".repeat(101) }, /name/],
        [{ expiry: 42 as KeyExpiry }, /expiry/],
        [{ actor: operator() }, /creator_member_id/],
        [{ creatorMemberId: ownerId }, /creator_member_id/],
      ];
      for (const [fields, message] of bad) {
        const error = await rejects(
          keys.createKey({ actor: member(editorId), projectId, name: "ok", ...fields }),
          Code.InvalidArgument,
        );
        expect(error.rawMessage).to.match(message);
      }
      // 100 code points is fine, even when they are not single UTF-16 units; quotes and
      // placeholders in a name are kept as they are.
      expect((await createKey({ name: "🔑".repeat(100) })).key.name).to.equal("🔑".repeat(100));
      const odd = `it's a \\ "quoted" name? $1 ?`;
      expect((await createKey({ name: odd })).key.name).to.equal(odd);
      const after = await db.query<{ n: string }>("select count(*) as n from keys.api_keys");
      expect(Number(after.rows[0]?.n)).to.equal(Number(rows[0]?.n) + 2);
    });

    it("allows 100 working keys per project, even when created concurrently", async function () {
      this.timeout(60_000);
      const crowded = await newProject(organizationId);
      const attempts = await Promise.allSettled(
        Array.from({ length: 105 }, (_, i) => createKey({ projectId: crowded, name: `key ${i}` })),
      );
      const made = attempts.filter((a) => a.status === "fulfilled");
      const refused = attempts.flatMap((a) => (a.status === "rejected" ? [ConnectError.from(a.reason)] : []));
      expect(made).to.have.length(100);
      expect(refused.map((e) => Code[e.code])).to.deep.equal(Array(5).fill("ResourceExhausted"));
      expect(refused[0]?.rawMessage).to.match(/100 active keys/);

      // A revoked key frees its place.
      const [one] = made as PromiseFulfilledResult<{ key: ApiKey }>[];
      await keys.revokeKey({ actor: operator(), projectId: crowded, keyId: one?.value.key.id ?? "" });
      await createKey({ projectId: crowded, name: "the 100th again" });
      await rejects(createKey({ projectId: crowded, name: "one too many" }), Code.ResourceExhausted);
    });
  });

  describe("VerifyKey", () => {
    it("answers VALID with the key's ids and caches it for the gateway by fingerprint", async () => {
      const { key, secret } = await createKey({ expiry: KeyExpiry.DAYS_30 });
      const verified = await keys.verifyKey({ secret });
      expect(verified.result).to.equal(VerifyKeyResult.VALID);
      expect(verified).to.deep.include({ keyId: key.id, projectId, creatorMemberId: editorId });
      expect(ms(verified.keyCreatedAt)).to.equal(ms(key.createdAt));
      expect(ms(verified.expiresAt)).to.equal(ms(key.expiresAt));

      expect(await cacheEntry(secret)).to.deep.equal({
        state: "valid",
        keyId: key.id,
        projectId,
        creatorMemberId: editorId,
        keyCreatedAt: new Date(ms(key.createdAt) ?? 0).toISOString(),
        expiresAt: new Date(ms(key.expiresAt) ?? 0).toISOString(),
      });
      const ttl = await redis.ttl(keyCacheKey(fingerprintOf(secret)));
      expect(ttl).to.be.within(1, validEntryTtlSeconds);
    });

    it("replaces an entry it cannot open (forged, or sealed under another secret) with its own", async () => {
      const { key, secret } = await createKey();
      const cacheKey = keyCacheKey(fingerprintOf(secret));
      const entry = {
        state: "valid" as const,
        keyId: key.id,
        projectId: foreignProjectId,
        creatorMemberId: editorId,
        keyCreatedAt: new Date().toISOString(),
        expiresAt: null,
      };
      const unopenable = [
        JSON.stringify(entry),
        sealKeyCacheEntry(
          "another secret, of before a rotation",
          fingerprintOf(secret),
          entry,
          Date.now() + 60_000,
        ),
      ];
      for (const value of unopenable) {
        await redis.set(cacheKey, value, "EX", 60);
        expect(await cacheEntry(secret)).to.equal(undefined);
        expect((await keys.verifyKey({ secret })).result).to.equal(VerifyKeyResult.VALID);
        expect(await cacheEntry(secret)).to.deep.include({ state: "valid", keyId: key.id, projectId });
      }
    });

    it("answers UNKNOWN, never an error, for anything that is not an issued secret", async () => {
      const { secret } = await createKey();
      const changed = `${secret.slice(0, 20)}${secret[20] === "a" ? "b" : "a"}${secret.slice(21)}`;
      const candidates = [
        "",
        "trk_",
        "Bearer trk_abc",
        secret.toUpperCase(),
        secret.replace("trk_", "trx_"),
        ` ${secret}`,
        `${secret} `,
        secret.slice(0, -1),
        changed,
        "trk_🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑",
        "\u0000".repeat(50),
        "x".repeat(100_000),
        unissuedSecret(),
      ];
      for (const candidate of candidates) {
        const answer = await keys.verifyKey({ secret: candidate });
        expect(answer.result, JSON.stringify(candidate.slice(0, 60))).to.equal(VerifyKeyResult.UNKNOWN);
        expect(answer.keyId).to.equal("");
        expect(answer.projectId).to.equal("");
        expect(await cacheEntry(candidate)).to.equal(undefined);
      }
    });

    it("answers EXPIRED once expires_at has passed, and caches nothing", async () => {
      const { key, secret } = await createKey({ expiry: KeyExpiry.DAYS_30 });
      // No API makes a key that expires sooner than 30 days, and a test cannot wait that long: the
      // key's times are moved 31 days back in the database (keeping expires_at > created_at).
      await db.query(
        "update keys.api_keys set created_at = created_at - interval '31 days', expires_at = expires_at - interval '31 days' where id = $1",
        [key.id],
      );
      const answer = await keys.verifyKey({ secret });
      expect(answer.result).to.equal(VerifyKeyResult.EXPIRED);
      expect(answer.keyId).to.equal(key.id);
      expect(ms(answer.expiresAt)).to.be.below(Date.now());
      expect(await cacheEntry(secret)).to.equal(undefined);
      const listed = await keys.listKeys({ actor: operator(), projectId });
      expect(listed.keys.find((k) => k.id === key.id)?.state).to.equal(KeyState.EXPIRED);
      expect((await storedRow(key.id)).last_used_at).to.equal(null);
    });
  });

  describe("RevokeKey", () => {
    it("turns the gateway's cache entry into a tombstone before it returns, then VerifyKey says REVOKED", async () => {
      const { key, secret } = await createKey();
      expect((await keys.verifyKey({ secret })).result).to.equal(VerifyKeyResult.VALID);
      expect((await cacheEntry(secret))?.state).to.equal("valid");

      const { key: revoked } = await keys.revokeKey({ actor: member(editorId), projectId, keyId: key.id });
      expect(await cacheEntry(secret)).to.deep.equal({ state: "revoked", keyId: key.id });
      expect(await redis.ttl(keyCacheKey(fingerprintOf(secret)))).to.be.above(tombstoneTtlSeconds - 60);
      expect(revoked?.state).to.equal(KeyState.REVOKED);
      const revokedAt = ms(revoked?.revokedAt) ?? 0;
      expect(revokedAt).to.be.within(ms(key.createdAt) ?? 0, Date.now());

      const answer = await keys.verifyKey({ secret });
      expect(answer.result).to.equal(VerifyKeyResult.REVOKED);
      expect(answer).to.deep.include({ keyId: key.id, projectId, creatorMemberId: editorId });
      // A verification of a dead key never writes a valid entry over the tombstone.
      expect((await cacheEntry(secret))?.state).to.equal("revoked");

      // Once the tombstone has lived out its time, the next verification writes it again.
      await redis.del(keyCacheKey(fingerprintOf(secret)));
      expect((await keys.verifyKey({ secret })).result).to.equal(VerifyKeyResult.REVOKED);
      expect(await cacheEntry(secret)).to.deep.equal({ state: "revoked", keyId: key.id });

      // Revoking again succeeds and changes nothing.
      const again = await keys.revokeKey({ actor: operator(), projectId, keyId: key.id });
      expect(ms(again.key?.revokedAt)).to.equal(revokedAt);
    });

    it("writes the tombstone even for a key the gateway never cached", async () => {
      const { key, secret } = await createKey();
      await keys.revokeKey({ actor: member(ownerId), projectId, keyId: key.id });
      expect(await cacheEntry(secret)).to.deep.equal({ state: "revoked", keyId: key.id });
    });

    it("is for EDITORs and operators only, and only for keys of the project named", async () => {
      const { key, secret } = await createKey();
      await rejects(
        keys.revokeKey({ actor: member(viewerId), projectId, keyId: key.id }),
        Code.PermissionDenied,
      );
      await rejects(
        keys.revokeKey({ actor: operator(), projectId: foreignProjectId, keyId: key.id }),
        Code.NotFound,
      );
      await rejects(keys.revokeKey({ actor: operator(), projectId, keyId: newId("key") }), Code.NotFound);
      await rejects(keys.revokeKey({ actor: operator(), projectId, keyId: "not-an-id" }), Code.NotFound);
      // A secret pasted in place of the id is not echoed back.
      const pasted = await rejects(
        keys.revokeKey({ actor: operator(), projectId, keyId: secret }),
        Code.NotFound,
      );
      expect(pasted.rawMessage).not.to.include(secret.slice(12));
      expect((await keys.verifyKey({ secret })).result).to.equal(VerifyKeyResult.VALID);
    });
  });

  describe("a creator losing rights", () => {
    it("DisableKeysOfMember kills the member's older keys for good; a key created later works", async () => {
      const loser = await newMember(organizationId, Role.EDITOR);
      const older = await createKey({ actor: member(loser) });
      const other = await createKey({ actor: member(editorId) });
      expect((await keys.verifyKey({ secret: older.secret })).result).to.equal(VerifyKeyResult.VALID);
      const lostAt = new Date();

      const first = await keys.disableKeysOfMember({ memberId: loser, lostAt: timestampFromDate(lostAt) });
      expect(first.disabledCount).to.equal(1);
      // The gateway's entry is a tombstone as soon as the call returned.
      expect(await cacheEntry(older.secret)).to.deep.equal({
        state: "creator_lost_rights",
        keyId: older.key.id,
      });
      expect((await keys.verifyKey({ secret: older.secret })).result).to.equal(
        VerifyKeyResult.CREATOR_LOST_RIGHTS,
      );
      expect((await keys.verifyKey({ secret: other.secret })).result).to.equal(VerifyKeyResult.VALID);
      const listed = (await keys.listKeys({ actor: operator(), projectId })).keys.find(
        (k) => k.id === older.key.id,
      );
      expect(listed?.state).to.equal(KeyState.CREATOR_LOST_RIGHTS);
      expect(ms(listed?.disabledAt)).to.equal(lostAt.getTime());

      // Repeated, or with an earlier time: nothing changes.
      const again = await keys.disableKeysOfMember({ memberId: loser, lostAt: timestampFromDate(lostAt) });
      expect(again.disabledCount).to.equal(0);
      const earlier = new Date(lostAt.getTime() - day);
      expect(
        (await keys.disableKeysOfMember({ memberId: loser, lostAt: timestampFromDate(earlier) }))
          .disabledCount,
      ).to.equal(0);

      // A key the member creates afterwards (it is still EDITOR in the catalog) works; the old one stays dead.
      const newer = await createKey({ actor: member(loser) });
      expect((await keys.verifyKey({ secret: newer.secret })).result).to.equal(VerifyKeyResult.VALID);
      expect((await keys.verifyKey({ secret: older.secret })).result).to.equal(
        VerifyKeyResult.CREATOR_LOST_RIGHTS,
      );
    });

    it("refuses to store a key whose creation was approved before a loss the keys service already knows of", async () => {
      const loser = await newMember(organizationId, Role.EDITOR);
      // A loss reported with a time after the creation's approval: the catalog still answers that
      // the member is an EDITOR, as it did for a creation approved just before the loss.
      await keys.disableKeysOfMember({
        memberId: loser,
        lostAt: timestampFromDate(new Date(Date.now() + 60_000)),
      });
      const error = await rejects(createKey({ actor: member(loser) }), Code.PermissionDenied);
      expect(error.rawMessage).to.match(/lost the rights/);
      const { rows } = await db.query("select 1 from keys.api_keys where creator_member_id = $1", [loser]);
      expect(rows).to.have.length(0);
    });

    it("through the catalog: a member made VIEWER and EDITOR again keeps its old keys dead, a new key works", async () => {
      const demoted = await newMember(organizationId, Role.EDITOR);
      const old = await createKey({ actor: member(demoted) });
      expect((await keys.verifyKey({ secret: old.secret })).result).to.equal(VerifyKeyResult.VALID);

      // The catalog tells the keys service before ChangeMemberRole returns.
      await catalog.changeMemberRole({ actor: operator(), memberId: demoted, role: Role.VIEWER });
      expect((await cacheEntry(old.secret))?.state).to.equal("creator_lost_rights");
      expect((await keys.verifyKey({ secret: old.secret })).result).to.equal(
        VerifyKeyResult.CREATOR_LOST_RIGHTS,
      );
      await rejects(createKey({ actor: member(demoted) }), Code.PermissionDenied);

      await catalog.changeMemberRole({ actor: operator(), memberId: demoted, role: Role.EDITOR });
      const fresh = await createKey({ actor: member(demoted) });
      expect((await keys.verifyKey({ secret: fresh.secret })).result).to.equal(VerifyKeyResult.VALID);
      expect((await keys.verifyKey({ secret: old.secret })).result).to.equal(
        VerifyKeyResult.CREATOR_LOST_RIGHTS,
      );
    });

    it("refuses a DisableKeysOfMember without member or time", async () => {
      await rejects(
        keys.disableKeysOfMember({ memberId: "", lostAt: timestampFromDate(new Date()) }),
        Code.InvalidArgument,
      );
      await rejects(keys.disableKeysOfMember({ memberId: editorId }), Code.InvalidArgument);
    });
  });

  describe("RevokeProjectKeys", () => {
    it("revokes every key of the project with tombstones, once; other projects keep theirs", async () => {
      const doomed = await newProject(organizationId);
      const a = await createKey({ projectId: doomed });
      const b = await createKey({ projectId: doomed });
      const elsewhere = await createKey();
      expect((await keys.verifyKey({ secret: a.secret })).result).to.equal(VerifyKeyResult.VALID);

      expect((await keys.revokeProjectKeys({ projectId: doomed })).revokedCount).to.equal(2);
      expect(await cacheEntry(a.secret)).to.deep.equal({ state: "revoked", keyId: a.key.id });
      expect(await cacheEntry(b.secret)).to.deep.equal({ state: "revoked", keyId: b.key.id });
      expect((await keys.verifyKey({ secret: a.secret })).result).to.equal(VerifyKeyResult.REVOKED);
      expect((await keys.verifyKey({ secret: elsewhere.secret })).result).to.equal(VerifyKeyResult.VALID);

      expect((await keys.revokeProjectKeys({ projectId: doomed })).revokedCount).to.equal(0);
      expect((await keys.revokeProjectKeys({ projectId: newId("prj") })).revokedCount).to.equal(0);
      await rejects(keys.revokeProjectKeys({ projectId: "" }), Code.InvalidArgument);
    });
  });

  describe("last use", () => {
    it("is recorded by VerifyKey at most once a minute, so repeated verifications write nothing", async () => {
      const { key, secret } = await createKey();
      const before = Date.now();
      await keys.verifyKey({ secret });
      const first = await storedRow(key.id);
      const usedAt = (first.last_used_at as Date).getTime();
      expect(usedAt).to.be.within(before, Date.now());

      for (let i = 0; i < 5; i++)
        expect((await keys.verifyKey({ secret })).result).to.equal(VerifyKeyResult.VALID);
      const later = await storedRow(key.id);
      // xmin is the transaction that wrote the row's current version: unchanged means not written.
      expect(later.version).to.equal(first.version);
      expect((later.last_used_at as Date).getTime()).to.equal(usedAt);
      const listed = (await keys.listKeys({ actor: operator(), projectId })).keys.find(
        (k) => k.id === key.id,
      );
      expect(ms(listed?.lastUsedAt)).to.equal(usedAt);
    });

    it("RecordKeyUse moves last_used_at forward only, by more than a minute, in one batch", async () => {
      const { key, secret } = await createKey();
      const now = Date.now();
      const use = (at: number, keyId = key.id) =>
        create(KeyUseSchema, { keyId, usedAt: timestampFromDate(new Date(at)) });
      const lastUsed = async () => ((await storedRow(key.id)).last_used_at as Date | null)?.getTime();

      // Duplicates in a batch: the latest wins; unknown ids are ignored.
      await keys.recordKeyUse({
        uses: [
          use(now - 10 * 60_000),
          use(now - 9 * 60_000),
          use(now, newId("key")),
          use(now, ""),
          use(now, `it's \\ "odd"`),
        ],
      });
      expect(await lastUsed()).to.equal(now - 9 * 60_000);
      const { version } = await storedRow(key.id);
      await keys.recordKeyUse({ uses: [use(now - 8 * 60_000 - 30_000)] });
      expect((await storedRow(key.id)).version, "a use within the minute is not written").to.equal(version);
      await keys.recordKeyUse({ uses: [use(now - 20 * 60_000)] });
      expect(await lastUsed(), "never backwards").to.equal(now - 9 * 60_000);
      await keys.recordKeyUse({ uses: [use(now - 5 * 60_000)] });
      expect(await lastUsed()).to.equal(now - 5 * 60_000);

      // A VerifyKey more than a minute after the recorded use writes it, once.
      await keys.verifyKey({ secret });
      const verifiedAt = await lastUsed();
      expect(verifiedAt).to.be.within(now, Date.now());
      const written = (await storedRow(key.id)).version;
      await keys.verifyKey({ secret });
      await keys.recordKeyUse({ uses: [use(Date.now())] });
      expect((await storedRow(key.id)).version).to.equal(written);

      // A caller's clock running ahead does not put last use in the future.
      const other = await createKey();
      await keys.recordKeyUse({ uses: [use(now + 60 * 60_000, other.key.id)] });
      const clamped = ((await storedRow(other.key.id)).last_used_at as Date).getTime();
      expect(clamped).to.be.within(now, Date.now());

      await rejects(
        keys.recordKeyUse({ uses: Array.from({ length: 1001 }, () => use(now)) }),
        Code.InvalidArgument,
      );
      const missing = await rejects(
        keys.recordKeyUse({ uses: [use(now), create(KeyUseSchema, { keyId: key.id })] }),
        Code.InvalidArgument,
      );
      expect(missing.rawMessage).to.equal("uses[1].used_at is required");
    });
  });

  describe("content tokens", () => {
    const token = (fields: CreateFields = {}) =>
      createKey({ kind: KeyKind.CONTENT_TOKEN, name: "push specs", ...fields });

    it("are created with a trc_ secret, listed apart from API keys, and never verified as one", async () => {
      const { key, secret } = await token();
      expect(secret).to.match(/^trc_[0-9A-Za-z]{46}$/);
      expect(secret.slice(44)).to.equal(checksumOf(secret.slice(4, 44)));
      expect(key).to.deep.include({
        kind: KeyKind.CONTENT_TOKEN,
        displayPrefix: secret.slice(0, 12),
        creatorMemberId: editorId,
        state: KeyState.ACTIVE,
        expiry: KeyExpiry.DAYS_90,
      });
      const apiKey = await createKey();
      expect(apiKey.key.kind).to.equal(KeyKind.API_KEY);

      // ListKeys without a kind lists API keys, as it always did; tokens are asked for by kind.
      const keysListed = await keys.listKeys({ actor: member(viewerId), projectId });
      expect(keysListed.keys.map((k) => k.id))
        .to.include(apiKey.key.id)
        .and.not.include(key.id);
      const tokensListed = await keys.listKeys({
        actor: member(viewerId),
        projectId,
        kind: KeyKind.CONTENT_TOKEN,
      });
      expect(tokensListed.keys.map((k) => k.id))
        .to.include(key.id)
        .and.not.include(apiKey.key.id);
      expect(tokensListed.keys.every((k) => k.kind === KeyKind.CONTENT_TOKEN)).to.equal(true);

      const verified = await keys.verifyContentToken({ secret });
      expect(verified).to.deep.include({
        result: VerifyKeyResult.VALID,
        tokenId: key.id,
        projectId,
        creatorMemberId: editorId,
      });
      expect(ms(verified.expiresAt)).to.equal(ms(key.expiresAt));
      expect((await storedRow(key.id)).last_used_at).to.be.instanceOf(Date);

      // Neither secret stands in for the other, and a token never reaches the gateway's key cache.
      expect((await keys.verifyKey({ secret })).result).to.equal(VerifyKeyResult.UNKNOWN);
      expect(await cacheEntry(secret)).to.equal(undefined);
      expect((await keys.verifyContentToken({ secret: apiKey.secret })).result).to.equal(
        VerifyKeyResult.UNKNOWN,
      );
      // The same random part under the other prefix is no token either.
      expect((await keys.verifyContentToken({ secret: `trc_${apiKey.secret.slice(4)}` })).result).to.equal(
        VerifyKeyResult.UNKNOWN,
      );
      expect((await keys.verifyContentToken({ secret: `trc_${unissuedSecret().slice(4)}` })).result).to.equal(
        VerifyKeyResult.UNKNOWN,
      );
    });

    it("are created by EDITORs and above only, never by a Viewer or an API key, and refuse an unknown kind", async () => {
      await rejects(token({ actor: member(viewerId) }), Code.PermissionDenied);
      const owned = await token({ actor: member(ownerId) });
      expect(owned.key.creatorMemberId).to.equal(ownerId);
      const asKey = create(ActorSchema, {
        kind: {
          case: "apiKey",
          value: {
            keyId: owned.key.id,
            creatorMemberId: ownerId,
            projectId,
            keyCreatedAt: timestampFromDate(new Date()),
          },
        },
      });
      await rejects(token({ actor: asKey }), Code.PermissionDenied);
      const unknown = await rejects(token({ kind: 7 as KeyKind }), Code.InvalidArgument);
      expect(unknown.rawMessage).to.equal("kind is not a known KeyKind value");
    });

    it("stop when revoked, expired, or their creator lost Editor rights, for good", async () => {
      const revoked = await token();
      await keys.revokeKey({ actor: member(editorId), projectId, keyId: revoked.key.id });
      expect((await keys.verifyContentToken({ secret: revoked.secret })).result).to.equal(
        VerifyKeyResult.REVOKED,
      );

      const expired = await token({ expiry: KeyExpiry.DAYS_30 });
      await db.query(
        "update keys.api_keys set created_at = created_at - interval '31 days', expires_at = expires_at - interval '31 days' where id = $1",
        [expired.key.id],
      );
      expect((await keys.verifyContentToken({ secret: expired.secret })).result).to.equal(
        VerifyKeyResult.EXPIRED,
      );

      const demoted = await newMember(organizationId, Role.EDITOR);
      const old = await token({ actor: member(demoted) });
      await catalog.changeMemberRole({ actor: operator(), memberId: demoted, role: Role.VIEWER });
      await catalog.changeMemberRole({ actor: operator(), memberId: demoted, role: Role.EDITOR });
      expect((await keys.verifyContentToken({ secret: old.secret })).result).to.equal(
        VerifyKeyResult.CREATOR_LOST_RIGHTS,
      );
      const listed = await keys.listKeys({ actor: operator(), projectId, kind: KeyKind.CONTENT_TOKEN });
      expect(listed.keys.find((k) => k.id === old.key.id)?.state).to.equal(KeyState.CREATOR_LOST_RIGHTS);
    });

    it("count apart from API keys toward the 100 active ones a project may hold", async () => {
      const crowded = await newProject(organizationId);
      await Promise.all(Array.from({ length: 100 }, () => createKey({ projectId: crowded })));
      const stillOne = await token({ projectId: crowded });
      expect(stillOne.key.state).to.equal(KeyState.ACTIVE);
    });
  });

  describe("when Redis fails", () => {
    const lonelyLog = capturedLogger("keys", "trace");
    let lonely: { stop(): Promise<void> };
    let redisServer: ThrowawayServer;
    let client: Client<typeof KeysService>;

    before(async () => {
      redisServer = await startThrowawayRedis();
      // A second keys service on its own Redis, beside the first, asking the same catalog.
      const own = inProcessRpc({ tokens: { service: tokens.SERVICE_TOKEN }, logger: lonelyLog.logger });
      lonely = await serveKeys(own, { ...keysEnv, REDIS_URL: redisServer.url }, catalog, lonelyLog);
      client = own.client(KeysService, tokens.SERVICE_TOKEN);
    });
    after(async () => {
      stoppedLogs.push(...lonelyLog.lines());
      await lonely?.stop();
      await redisServer?.stop();
    });

    it("still verifies keys, and a revoke is saved but answers UNAVAILABLE so that the caller retries", async () => {
      const created = await client.createKey({ actor: member(editorId), projectId, name: "no cache" });
      issued.push(created.secret);
      await redisServer.stop();

      // The cache only saves later calls: a verification without it still answers.
      expect((await client.verifyKey({ secret: created.secret })).result).to.equal(VerifyKeyResult.VALID);
      const error = await rejects(
        client.revokeKey({ actor: member(editorId), projectId, keyId: created.key?.id ?? "" }),
        Code.Unavailable,
      );
      expect(error.rawMessage).to.match(/saved.*retry/);
      expect((await client.verifyKey({ secret: created.secret })).result).to.equal(VerifyKeyResult.REVOKED);
    });
  });

  // Nested, so that mocha runs it after every other test of this suite (top-level tests run first).
  describe("logs", () => {
    it("never hold a secret, after everything above", () => {
      expect(issued.length).to.be.above(100);
      const lines = [...keysLog.lines(), ...catalogService.lines(), ...stoppedLogs];
      expect(lines.length).to.be.above(100);
      for (const secret of issued) {
        // The part after the display prefix is what must never be seen again.
        const hidden = secret.slice(12);
        // Only the line's position is reported: the failure message must not spread the secret.
        const leak = lines.findIndex((line) => line.includes(hidden));
        expect(leak, `log line ${leak} holds a secret`).to.equal(-1);
      }
    });
  });
});
