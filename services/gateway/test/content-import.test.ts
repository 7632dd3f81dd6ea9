import { randomBytes } from "node:crypto";
import { create, type DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { CatalogService, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { KeyExpiry, KeyKind, KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { serviceClient } from "@testrun/kit";
import {
  componentRedisUrl,
  createMigratedTestDatabase,
  findFreePort,
  type GatewayProcess,
  type ServiceProcess,
  startGateway,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import pg from "pg";
import { maxImportBodyBytes } from "../src/routes/content-import.js";
import { type Answer, call, expectError, requestLogLine } from "./support.js";

/**
 * The content import (POST /v1/content/import) through real processes: catalog, keys and the
 * gateway on one database and Redis, documents posted over HTTP as `testrun push` posts them.
 * A content token imports, as its creator, and does nothing else; an API key never imports.
 */
describe("gateway: content import with content tokens (catalog, keys, gateway as processes)", function () {
  this.timeout(120_000);
  const tokens = testTokens();
  const operator: Actor = create(ActorSchema, { kind: { case: "operator", value: { name: "import test" } } });
  /** Every secret handed out: none may show in a log line or an answer's body. */
  const secrets: string[] = [];
  /** Every answer's text, to look for secrets in at the end. */
  const bodies: string[] = [];
  let catalogProcess: ServiceProcess;
  let keysProcess: ServiceProcess;
  let gateway: GatewayProcess;
  let catalog: Client<typeof CatalogService>;
  let keys: Client<typeof KeysService>;
  let db: pg.Client;
  let orgId = "";
  let editorId = "";
  let projectId = "";
  let otherProjectId = "";

  const client = <S extends DescService>(service: S, url: string) =>
    serviceClient(service, url, { token: tokens.SERVICE_TOKEN, timeoutMs: 30_000 });

  const addMember = async (role: Role) => {
    const { member } = await catalog.addMember({
      actor: operator,
      organizationId: orgId,
      email: `m-${randomBytes(4).toString("hex")}@example.com`,
      displayName: "M",
      role,
    });
    return member?.id ?? "";
  };

  const newSecret = async (kind: KeyKind, creator = editorId, project = projectId) => {
    const { key, secret } = await keys.createKey({
      actor: operator,
      projectId: project,
      name: kind === KeyKind.CONTENT_TOKEN ? "push from CI" : "ci",
      expiry: KeyExpiry.DAYS_30,
      creatorMemberId: creator,
      kind,
    });
    secrets.push(secret);
    return { id: key?.id ?? "", secret };
  };
  const newToken = (creator?: string, project?: string) => newSecret(KeyKind.CONTENT_TOKEN, creator, project);

  const step = { name: "home", http: { method: "GET", path: "/" }, expect: { status: 200 } };
  const documentOf = (...names: string[]) => ({
    testCases: names.map((name) => ({ name, tags: ["pushed"], steps: [step] })),
  });

  /** A POST of a document to the import, as a pipeline sends it. */
  async function push(secret: string, document: unknown, query = ""): Promise<Answer> {
    const answer = await call(gateway.http, `/v1/content/import${query}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
      body: JSON.stringify(document),
    });
    bodies.push(JSON.stringify(answer.body));
    return answer;
  }
  async function get(path: string, secret: string, init: RequestInit = {}): Promise<Answer> {
    const answer = await call(gateway.http, path, {
      ...init,
      headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
    });
    bodies.push(JSON.stringify(answer.body));
    return answer;
  }
  const caseNames = async (project = projectId) =>
    (await catalog.listTestCases({ actor: operator, projectId: project })).testCases
      .map((c) => c.name)
      .sort();

  before(async () => {
    const databaseUrl = await createMigratedTestDatabase(["catalog", "keys"]);
    const [keysPort, catalogPort] = [await findFreePort(), await findFreePort()];
    const keysUrl = `http://127.0.0.1:${keysPort}`;
    const catalogUrl = `http://127.0.0.1:${catalogPort}`;
    const adminRedisUrl = String(process.env.REDIS_URL);
    const common = { ...tokens, DATABASE_URL: databaseUrl };
    [catalogProcess, keysProcess] = await Promise.all([
      startServiceProcess("catalog", {
        ...common,
        PORT: String(catalogPort),
        KEYS_URL: keysUrl,
        REDIS_URL: componentRedisUrl(adminRedisUrl, "catalog"),
        VARIABLES_KEY: randomBytes(32).toString("base64"),
      }),
      startServiceProcess("keys", {
        ...common,
        PORT: String(keysPort),
        CATALOG_URL: catalogUrl,
        REDIS_URL: componentRedisUrl(adminRedisUrl, "keys"),
      }),
    ]);
    gateway = await startGateway({
      ...tokens,
      REDIS_URL: componentRedisUrl(adminRedisUrl, "gateway"),
      KEYS_URL: keysUrl,
      CATALOG_URL: catalogUrl,
      TRUST_PROXY_HOPS: "1",
    });
    catalog = client(CatalogService, catalogUrl);
    keys = client(KeysService, keysUrl);
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();

    const { organization } = await catalog.createOrganization({
      actor: operator,
      name: "Acme",
      ownerEmail: "owner@example.com",
      ownerDisplayName: "Olga",
    });
    orgId = organization?.id ?? "";
    editorId = await addMember(Role.EDITOR);
    for (const name of ["Shop", "Blog"]) {
      const { project } = await catalog.createProject({ actor: operator, organizationId: orgId, name });
      if (name === "Shop") projectId = project?.id ?? "";
      else otherProjectId = project?.id ?? "";
    }
  });

  after(async () => {
    await db?.end();
    await Promise.all([gateway, catalogProcess, keysProcess].map((p) => p?.stop("SIGKILL")));
  });

  it("imports a document into the token's project as its creator: created, then unchanged; a dry run writes nothing", async () => {
    const token = await newToken();
    const preview = await push(token.secret, documentOf("Home page loads"), "?dryRun=true");
    expect(preview.status, JSON.stringify(preview.body)).to.equal(200);
    expect(preview.body).to.deep.include({ applied: false });
    expect(preview.body.testCases).to.deep.equal([
      { path: "testCases[0]", name: "Home page loads", outcome: "created" },
    ]);
    expect(await caseNames()).to.deep.equal([]);

    const first = await push(token.secret, documentOf("Home page loads", "Search works"));
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.applied).to.equal(true);
    expect((first.body.testCases as { outcome: string }[]).map((c) => c.outcome)).to.deep.equal([
      "created",
      "created",
    ]);
    expect(await caseNames()).to.deep.equal(["Home page loads", "Search works"]);
    expect(await caseNames(otherProjectId)).to.deep.equal([]);
    // Stored as the member's change: the console says who pushed it.
    const { testCases } = await catalog.listTestCases({ actor: operator, projectId });
    for (const stored of testCases) {
      expect(stored.updatedBy?.kind.case).to.equal("member");
      expect(stored.updatedBy?.kind.value).to.deep.include({ memberId: editorId });
    }
    expect(first.headers.get("ratelimit-limit")).to.equal("60");

    const again = await push(token.secret, documentOf("Home page loads", "Search works"));
    expect((again.body.testCases as { outcome: string }[]).map((c) => c.outcome)).to.deep.equal([
      "unchanged",
      "unchanged",
    ]);
    const listed = await keys.listKeys({ actor: operator, projectId, kind: KeyKind.CONTENT_TOKEN });
    expect(listed.keys.find((k) => k.id === token.id)?.lastUsedAt).to.not.equal(undefined);
  });

  it("names every bad field of a document by its path and imports nothing", async () => {
    const token = await newToken();
    const broken = await push(token.secret, {
      testCases: [
        { name: "Fine", steps: [step] },
        { name: "", steps: [step] },
      ],
    });
    expectError(broken, 400, "invalid_request");
    expect(broken.body.error).to.equal('nothing was imported: testCases[1] "": name: is required');
    expect(broken.body.violations, JSON.stringify(broken.body)).to.deep.include({
      field: "testCases[1].name",
      problem: "is required",
    });
    const unreadable = await push(token.secret, { testCase: [] });
    expectError(unreadable, 400, "invalid_request");
    expect((unreadable.body.violations as { field: string }[])[0]?.field).to.equal("testCase");
    const badQuery = await push(token.secret, documentOf("X"), "?dry=1");
    expectError(badQuery, 400, "invalid_request");
    expect(await caseNames()).to.not.include("Fine");
  });

  it("refuses a content token everywhere else: reads, runs, results, the MCP tools", async () => {
    const token = await newToken();
    for (const [path, method, body] of [
      ["/v1/project", "GET", undefined],
      ["/v1/test-cases", "GET", undefined],
      ["/v1/runs", "GET", undefined],
      ["/v1/runs", "POST", JSON.stringify({ testPlan: "Smoke" })],
      ["/v1/runs/run_01jd000000000000000000000", "GET", undefined],
      ["/v1/failure-groups", "GET", undefined],
      ["/v1/quarantines", "GET", undefined],
      ["/v1/mcp", "POST", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })],
    ] as const) {
      const answer = await get(path, token.secret, { method, ...(body && { body }) });
      expectError(answer, 401, "unauthorized");
      expect(answer.body.error, `${method} ${path}`).to.equal(
        "a content token (trc_…) only imports content (POST /v1/content/import); this request needs an API key (trk_…)",
      );
    }
  });

  it("refuses an API key on the import, and a request without a credential", async () => {
    const apiKey = await newSecret(KeyKind.API_KEY);
    // The key works where it belongs…
    expect((await get("/v1/project", apiKey.secret)).status).to.equal(200);
    // …but never imports.
    const answer = await push(apiKey.secret, documentOf("Via a key"));
    expectError(answer, 401, "unauthorized");
    expect(answer.body.error).to.equal(
      "an API key (trk_…) cannot import content: use a content token (trc_…), which an Editor creates in the console's API & CI",
    );
    const anonymous = await call(gateway.http, "/v1/content/import", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(documentOf("Anonymous")),
    });
    expectError(anonymous, 401, "unauthorized");
    expect(anonymous.body.error).to.match(/^a content token is required/);
    const made = `trc_${randomBytes(23).toString("hex")}`;
    expect((await push(made, documentOf("Guessed"))).body.error).to.equal("invalid content token");
    expect(await caseNames()).to.not.include.members(["Via a key", "Anonymous", "Guessed"]);
  });

  it("stops a revoked or expired token at once", async () => {
    const revoked = await newToken();
    expect((await push(revoked.secret, documentOf("Before revoking"))).status).to.equal(200);
    await keys.revokeKey({ actor: operator, projectId, keyId: revoked.id });
    const afterRevoke = await push(revoked.secret, documentOf("After revoking"));
    expectError(afterRevoke, 401, "unauthorized");
    expect(afterRevoke.body.error).to.equal("the content token was revoked");

    const expired = await newToken();
    await db.query(
      "update keys.api_keys set created_at = created_at - interval '31 days', expires_at = expires_at - interval '31 days' where id = $1",
      [expired.id],
    );
    const late = await push(expired.secret, documentOf("Too late"));
    expectError(late, 401, "key_expired");
    expect(late.body.error).to.equal("the content token has expired");
    expect(await caseNames())
      .to.include("Before revoking")
      .and.not.include.members(["After revoking", "Too late"]);
  });

  it("stops with its creator's rights: made Viewer (even Editor again) or removed, the import is 403", async () => {
    const lostRights =
      "the content token's creator is no longer an Editor or above in this project, so the token no longer works; an Editor creates a new one";
    const demoted = await addMember(Role.EDITOR);
    const demotedToken = await newToken(demoted);
    expect((await push(demotedToken.secret, documentOf("While an Editor"))).status).to.equal(200);
    await catalog.changeMemberRole({ actor: operator, memberId: demoted, role: Role.VIEWER });
    const asViewer = await push(demotedToken.secret, documentOf("As a Viewer"));
    expectError(asViewer, 403, "forbidden");
    expect(asViewer.body.error).to.equal(lostRights);
    await catalog.changeMemberRole({ actor: operator, memberId: demoted, role: Role.EDITOR });
    expectError(await push(demotedToken.secret, documentOf("Editor again")), 403, "forbidden");

    const leaving = await addMember(Role.ADMIN);
    const leavingToken = await newToken(leaving);
    await catalog.removeMember({ actor: operator, memberId: leaving });
    const removed = await push(leavingToken.secret, documentOf("After leaving"));
    expectError(removed, 403, "forbidden");
    expect(removed.body.error).to.equal(lostRights);
    expect(await caseNames())
      .to.include("While an Editor")
      .and.not.include.members(["As a Viewer", "Editor again", "After leaving"]);
  });

  it("logs a content token pasted into a path with the token replaced", async () => {
    const token = await newToken();
    const apiKey = await newSecret(KeyKind.API_KEY);
    const answer = await get(`/v1/runs/${token.secret}`, apiKey.secret);
    expectError(answer, 404, "not_found");
    expect(await requestLogLine(gateway, answer)).to.include({ path: "/v1/runs/trc_[redacted]" });
  });

  it("refuses a document one byte past maxImportBodyBytes with 413, reading the one at the bound", async () => {
    const { secret } = await newToken();
    /** A document of exactly `bytes` bytes: a case whose tag is padding. */
    const sized = (bytes: number) => {
      const base = JSON.stringify(documentOf("padded")).replace('"pushed"', '"pushed",""');
      return base.replace('""', `"${"x".repeat(bytes - Buffer.byteLength(base))}"`);
    };
    const send = (body: string) =>
      call(gateway.http, "/v1/content/import?dryRun=true", {
        method: "POST",
        headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
        body,
      });
    const past = await send(sized(maxImportBodyBytes + 1));
    expect(past.status).to.equal(413);
    // At the bound it is read: refused for what it says (a tag far too long), not for its size.
    const at = await send(sized(maxImportBodyBytes));
    expect(at.status).to.equal(400);
  });

  it("never shows a secret in an answer or a log line", async () => {
    expect(secrets.length).to.be.greaterThan(6);
    const answers = bodies.join("\n");
    for (const process of [gateway, catalogProcess, keysProcess]) {
      const output = process.output().join("\n");
      expect(output.length, process.name).to.be.greaterThan(0);
      for (const secret of secrets) {
        expect(output, `${process.name} logged a secret`).not.to.contain(secret.slice(12));
        expect(answers, "an answer holds a secret").not.to.contain(secret.slice(12));
      }
    }
  });
});
