// The console's sign-in, sessions and API as a browser meets them, over real HTTP to the whole
// system (every service its own process): links, sessions ending, CSRF, role rules kept where
// they are enforced, and no secret in any log line.
import { once } from "node:events";
import { connect } from "node:net";
import { Code } from "@connectrpc/connect";
import { addMember, createCliContext, createOrganization, createProject, removeMember } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeyExpiry, KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { expect } from "chai";
import pg from "pg";
import type { System } from "../scripts/system.js";
import {
  consoleClient,
  redeemLink,
  refusal,
  sessionCookieOf,
  signIn,
  signInLinkOf,
} from "./console-client.js";
import { newProject, sharedTestSystem, type TestProject } from "./pipeline.js";

describe("console (end to end)", function () {
  this.timeout(60_000);
  let system: System;
  let db: pg.Client;
  let acme: TestProject;
  /** Every credential the tests saw: none may appear in any process's output. */
  const secrets: string[] = [];

  const sql = async (text: string, params: unknown[]) => (await db.query(text, params)).rowCount;
  const memberOf = async (email: string, role: Role, organizationId: string) =>
    addMember(createCliContext(system.env), {
      organizationId,
      email,
      displayName: email.split("@")[0] ?? "",
      role,
    });
  /**
   * What a cookie whose session no longer lives gets: GetSession's "nobody", saying the session
   * ended (the sign-in page says so), and every other call UNAUTHENTICATED.
   */
  const expectEnded = async (cookie: string) => {
    const client = consoleClient(system, cookie);
    expect(await client.getSession({})).to.include({ signedIn: false, sessionEnded: true, email: "" });
    expect((await refusal(client.listProjects({ organizationId: "org_x" }))).code).to.equal(
      Code.Unauthenticated,
    );
  };
  const organizationOf = async (project: TestProject) =>
    (
      await consoleClient(system, await signIn(system, project.ownerId)).getProject({
        projectId: project.projectId,
      })
    ).organization?.id ?? "";

  before(async () => {
    system = await sharedTestSystem();
    db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    acme = await newProject(system, "Acme console", { credits: 0 });
  });

  after(async () => {
    await db?.end();
  });

  describe("sign-in links", () => {
    it("sign in once with an HttpOnly, SameSite=Lax session cookie, and never again", async () => {
      const { url, token } = await signInLinkOf(system, acme.ownerId);
      secrets.push(token);
      expect(url).to.equal(`${system.consoleUrl.replace("127.0.0.1", "localhost")}/sign-in/link#${token}`);

      const first = await redeemLink(system, token);
      expect(first.status).to.equal(204);
      const cookie = first.headers.getSetCookie().find((c) => c.startsWith("testrun_session=")) ?? "";
      expect(cookie)
        .to.match(/; HttpOnly/)
        .and.match(/; SameSite=Lax/)
        .and.match(/; Path=\//);
      // Served over http here: Secure (and the __Host- prefix) come with an https APP_URL.
      expect(cookie).not.to.match(/; Secure/);
      secrets.push(sessionCookieOf(first));
      const session = await consoleClient(system, sessionCookieOf(first)).getSession({});
      // Stored, and signed in, in its normal form (lower case).
      expect(session).to.include({
        signedIn: true,
        sessionEnded: false,
        email: "owner@acme-console.example",
      });

      const again = await redeemLink(system, token);
      expect(again.status).to.equal(400);
      expect(again.headers.getSetCookie()).to.deep.equal([]);
    });

    it("refuses a link after its 15 minutes, and an unknown one", async () => {
      const { token } = await signInLinkOf(system, acme.ownerId);
      secrets.push(token);
      // 15 minutes pass for this link.
      const digest = (await import("node:crypto")).createHash("sha256").update(token).digest("hex");
      expect(
        await sql(
          "update console.sign_in_links set expires_at = now() - interval '1 second' where digest = $1",
          [digest],
        ),
      ).to.equal(1);
      expect((await redeemLink(system, token)).status).to.equal(400);
      expect((await redeemLink(system, "x".repeat(43))).status).to.equal(400);
    });

    it("is refused to a removed member by testrunctl", async () => {
      const organizationId = await organizationOf(acme);
      const gone = await memberOf("gone@acme.example", Role.EDITOR, organizationId);
      await removeMember(createCliContext(system.env), { memberId: gone.id });
      const error = await refusal(signInLinkOf(system, gone.id));
      expect(error.message).to.contain("removed");
    });
  });

  describe("sessions", () => {
    it("no cookie: GetSession answers nobody, every other call but the sign-in options UNAUTHENTICATED", async () => {
      const anonymous = consoleClient(system);
      const nobody = await anonymous.getSession({});
      expect(nobody).to.include({ signedIn: false, sessionEnded: false, email: "", apiUrl: "" });
      expect(nobody.memberships).to.deep.equal([]);
      expect((await anonymous.getSignInOptions({})).oidcEnabled).to.equal(false);
      for (const call of [
        anonymous.listProjects({ organizationId: "org_x" }),
        anonymous.signOutEverywhere({}),
        anonymous.listApiKeys({ projectId: acme.projectId }),
      ])
        expect((await refusal(call)).code).to.equal(Code.Unauthenticated);
    });

    it("reads at most 1 KiB of a request from anyone without a session (their requests are empty)", async () => {
      const post = (method: string, body: string) =>
        fetch(`${system.consoleUrl}/api/testrun.console.v1.ConsoleService/${method}`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: system.consoleUrl },
          body,
        });
      for (const method of ["GetSession", "GetSignInOptions"]) {
        expect((await post(method, "{}")).status, method).to.equal(200);
        const large = await post(method, `{"padding":"${"x".repeat(64 * 1024)}"}`);
        expect(large.status, method).to.equal(429);
        expect(((await large.json()) as { message: string }).message).to.contain(
          "larger than configured readMaxBytes 1024",
        );
      }
    });

    it("answers a made-up or ended session cookie 401 from the headers within 100 ms while its body never comes, and closes", async () => {
      const ended = await signIn(system, acme.ownerId);
      await fetch(`${system.consoleUrl}/auth/sign-out`, { method: "POST", headers: { cookie: ended } });
      const { hostname, port } = new URL(system.consoleUrl);
      for (const cookie of ["testrun_session=made-up", ended]) {
        const socket = connect(Number(port), hostname);
        await once(socket, "connect");
        let text = "";
        let firstByteAt = Number.NaN;
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
          if (!text) firstByteAt = performance.now();
          text += chunk;
        });
        const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
        const head = `POST /api/testrun.console.v1.ConsoleService/ListProjects HTTP/1.1\r\nHost: ${hostname}\r\nOrigin: ${system.consoleUrl}\r\nCookie: ${cookie}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`;
        await new Promise<void>((resolve) => socket.write(head, () => resolve()));
        const sentAt = performance.now();
        await closed;
        expect(text, cookie).to.match(/^HTTP\/1\.1 401 /);
        expect(text).to.match(/^Connection: close\r$/im);
        expect(firstByteAt - sentAt, "ms from headers to answer").to.be.below(100);
      }
    });

    it("sign-out ends the session on the server, not just in the browser", async () => {
      const cookie = await signIn(system, acme.ownerId);
      const out = await fetch(`${system.consoleUrl}/auth/sign-out`, { method: "POST", headers: { cookie } });
      expect(out.status).to.equal(204);
      expect(out.headers.getSetCookie()[0]).to.match(/^testrun_session=; Max-Age=0/);
      // The old cookie, replayed, opens nothing.
      await expectEnded(cookie);
    });

    it("ends after the idle time and after the absolute lifetime", async () => {
      const idle = await signIn(system, acme.ownerId);
      const longLived = await signIn(system, acme.ownerId);
      const digest = async (cookie: string) =>
        (await import("node:crypto"))
          .createHash("sha256")
          .update(cookie.split("=")[1] ?? "")
          .digest("hex");
      // 12 hours without a call; and, for the other, 7 days since sign-in.
      await sql("update console.sessions set last_seen_at = now() - interval '12 hours' where digest = $1", [
        await digest(idle),
      ]);
      await sql("update console.sessions set expires_at = now() - interval '1 second' where digest = $1", [
        await digest(longLived),
      ]);
      for (const cookie of [idle, longLived]) await expectEnded(cookie);
    });

    it("a member removed while signed in loses the session at once", async () => {
      const organizationId = await organizationOf(acme);
      const leaving = await memberOf("leaving@acme.example", Role.EDITOR, organizationId);
      const cookie = await signIn(system, leaving.id);
      const client = consoleClient(system, cookie);
      expect((await client.listApiKeys({ projectId: acme.projectId })).keys.length).to.be.greaterThan(0);

      await removeMember(createCliContext(system.env), { memberId: leaving.id });
      expect((await refusal(client.listApiKeys({ projectId: acme.projectId }))).code).to.equal(
        Code.Unauthenticated,
      );
      const { rows } = await db.query(
        "select count(*)::int as n from console.session_members where member_id = $1",
        [leaving.id],
      );
      expect(rows[0].n).to.equal(0);
    });

    it("removing a member in the console ends their sessions before their next call", async () => {
      const organizationId = await organizationOf(acme);
      const leaving = await memberOf("leaving.now@acme.example", Role.EDITOR, organizationId);
      const cookie = await signIn(system, leaving.id);
      const owner = consoleClient(system, await signIn(system, acme.ownerId));
      await owner.removeMember({ organizationId, memberId: leaving.id });
      const sessionsOf = async () =>
        (
          await db.query("select count(*)::int as n from console.session_members where member_id = $1", [
            leaving.id,
          ])
        ).rows[0].n;
      expect(await sessionsOf()).to.equal(0);
      // Added back at once (the same member id): the old session stays ended.
      await memberOf("leaving.now@acme.example", Role.EDITOR, organizationId);
      await expectEnded(cookie);
    });

    it("a sign-in link signs in its member, in its organization only, even with a KELVIN SIGN email", async () => {
      // Kate is an Owner in org B. An Admin of org A adds "\u212Aate@…" (KELVIN SIGN) and gets its link.
      const orgB = await newProject(system, "Kates own", { credits: 0 });
      const orgBId = await organizationOf(orgB);
      const kateInB = await memberOf("kate@corp.example", Role.OWNER, orgBId);
      const orgAId = await organizationOf(acme);
      const admin = await memberOf("admin.a@acme.example", Role.ADMIN, orgAId);
      const asAdmin = consoleClient(system, await signIn(system, admin.id));
      const { member } = await asAdmin.addMember({
        organizationId: orgAId,
        email: "\u212Aate@corp.example",
        displayName: "Kate?",
        role: Role.VIEWER,
      });
      expect(member?.email).to.equal("kate@corp.example");
      const session = consoleClient(system, await signIn(system, member?.id ?? ""));
      const { memberships } = await session.getSession({});
      expect(memberships.map((m) => [m.organization?.id, m.member?.id])).to.deep.equal([
        [orgAId, member?.id],
      ]);
      for (const call of [
        session.listProjects({ organizationId: orgBId }),
        session.listApiKeys({ projectId: orgB.projectId }),
        session.listMembers({ organizationId: orgBId }),
      ])
        expect((await refusal(call)).code).to.equal(Code.NotFound);
      // Kate's own link still gives her org B (and only B: her member there).
      const kate = await consoleClient(system, await signIn(system, kateInB.id)).getSession({});
      expect(kate.memberships.map((m) => m.organization?.id)).to.deep.equal([orgBId]);
    });

    it("signing in ends the browser's previous session", async () => {
      const first = await signIn(system, acme.ownerId);
      const organizationId = await organizationOf(acme);
      const other = await memberOf("second.person@acme.example", Role.VIEWER, organizationId);
      const { token } = await signInLinkOf(system, other.id);
      secrets.push(token);
      const second = await redeemLink(system, token, { cookie: first });
      expect(second.status).to.equal(204);
      await expectEnded(first);
      expect((await consoleClient(system, sessionCookieOf(second)).getSession({})).email).to.equal(
        "second.person@acme.example",
      );
    });

    it("Sign out everywhere ends every session of the member, and no one else's", async () => {
      const organizationId = await organizationOf(acme);
      const person = await memberOf("everywhere@acme.example", Role.EDITOR, organizationId);
      const laptop = await signIn(system, person.id);
      const phone = await signIn(system, person.id);
      const someoneElse = await signIn(system, acme.ownerId);
      const { endedSessions } = await consoleClient(system, phone).signOutEverywhere({});
      expect(endedSessions).to.equal(2);
      for (const cookie of [laptop, phone]) await expectEnded(cookie);
      expect((await consoleClient(system, someoneElse).getSession({})).memberships.length).to.equal(1);
    });

    it("a link can be looked at without being used: who it signs in, and where", async () => {
      const { token } = await signInLinkOf(system, acme.ownerId);
      secrets.push(token);
      const preview = (candidate: string) =>
        fetch(`${system.consoleUrl}/auth/link/preview`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ token: candidate }),
        });
      const answer = await preview(token);
      expect(answer.status).to.equal(200);
      expect(answer.headers.getSetCookie()).to.deep.equal([]);
      expect(await answer.json()).to.deep.equal({
        memberId: acme.ownerId,
        email: "owner@acme-console.example",
        displayName: "Owner",
        organizationId: await organizationOf(acme),
        organizationName: "Acme console",
      });
      expect((await preview("x".repeat(43))).status).to.equal(400);
      // Still unused: it signs in once now.
      expect((await redeemLink(system, token)).status).to.equal(204);
      expect((await preview(token)).status).to.equal(400);
    });
  });

  describe("acting for the signed-in member", () => {
    it("an Editor's key works on /v1 and its revocation is the next request's 401", async () => {
      const organizationId = await organizationOf(acme);
      const editor = await memberOf("editor@acme.example", Role.EDITOR, organizationId);
      const client = consoleClient(system, await signIn(system, editor.id));

      const created = await client.createApiKey({
        projectId: acme.projectId,
        name: "GitHub Actions",
        expiry: KeyExpiry.DAYS_30,
      });
      secrets.push(created.secret);
      expect(created.key?.key?.creatorMemberId).to.equal(editor.id);
      expect(created.key?.creatorName).to.equal("editor");
      const project = () =>
        fetch(`${system.gatewayUrl}/v1/project`, { headers: { authorization: `Bearer ${created.secret}` } });
      expect((await project()).status).to.equal(200);

      const listed = await client.listApiKeys({ projectId: acme.projectId });
      const entry = listed.keys.find((k) => k.key?.id === created.key?.key?.id);
      expect(entry?.key?.displayPrefix).to.equal(created.secret.slice(0, 12));
      const text = JSON.stringify(listed, (_, value) => (typeof value === "bigint" ? String(value) : value));
      expect(text).not.to.contain(created.secret);

      const revoked = await client.revokeApiKey({
        projectId: acme.projectId,
        keyId: created.key?.key?.id ?? "",
      });
      expect(revoked.key?.key?.state).to.equal(KeyState.REVOKED);
      expect((await project()).status).to.equal(401);
    });

    it("a Viewer sees the key list, and creating or revoking through the API is refused", async () => {
      const organizationId = await organizationOf(acme);
      const viewer = await memberOf("viewer@acme.example", Role.VIEWER, organizationId);
      const client = consoleClient(system, await signIn(system, viewer.id));
      const { keys } = await client.listApiKeys({ projectId: acme.projectId });
      expect(keys.map((k) => k.key?.name)).to.include("pipeline");

      const create = await refusal(client.createApiKey({ projectId: acme.projectId, name: "sneaky" }));
      expect(create.code).to.equal(Code.PermissionDenied);
      const revoke = await refusal(
        client.revokeApiKey({ projectId: acme.projectId, keyId: keys[0]?.key?.id ?? "" }),
      );
      expect(revoke.code).to.equal(Code.PermissionDenied);
      expect((await client.listApiKeys({ projectId: acme.projectId })).keys.length).to.equal(keys.length);
    });

    it("another organization's project is not found, exactly like an unknown id", async () => {
      const client = consoleClient(system, await signIn(system, acme.ownerId));
      const ctx = createCliContext(system.env);
      const { organization } = await createOrganization(ctx, { name: "Elsewhere" });
      const theirs = await createProject(ctx, { organizationId: organization?.id ?? "", name: "Theirs" });
      for (const projectId of [theirs.id, "prj_01jd3k0000000000000000000", "not-an-id"]) {
        const error = await refusal(client.listApiKeys({ projectId }));
        expect([error.code, error.rawMessage]).to.deep.equal([Code.NotFound, "project not found"]);
      }
      const members = await refusal(client.listMembers({ organizationId: organization?.id ?? "" }));
      expect(members.code).to.equal(Code.NotFound);
    });
  });

  describe("the browser's defences", () => {
    const createKey = (cookie: string, headers: Record<string, string>, contentType = "application/json") =>
      fetch(`${system.consoleUrl}/api/testrun.console.v1.ConsoleService/CreateApiKey`, {
        method: "POST",
        headers: { cookie, "content-type": contentType, ...headers },
        body: JSON.stringify({ projectId: acme.projectId, name: "csrf" }),
      });

    it("refuses a cross-site POST (Sec-Fetch-Site or Origin) and form content, creating nothing", async () => {
      const cookie = await signIn(system, acme.ownerId);
      const before = (await consoleClient(system, cookie).listApiKeys({ projectId: acme.projectId })).keys
        .length;

      const crossSite = await createKey(cookie, {
        "sec-fetch-site": "cross-site",
        origin: "https://evil.example",
      });
      expect(crossSite.status).to.equal(403);
      expect(await crossSite.json()).to.have.property("code", "permission_denied");
      expect((await createKey(cookie, { origin: "https://evil.example" })).status).to.equal(403);
      // What a cross-site HTML form can send: not a Connect content type.
      const form = await createKey(
        cookie,
        { "sec-fetch-site": "same-origin" },
        "application/x-www-form-urlencoded",
      );
      expect(form.status).to.equal(415);
      const signOut = await fetch(`${system.consoleUrl}/auth/sign-out`, {
        method: "POST",
        headers: { cookie, "sec-fetch-site": "cross-site" },
      });
      expect(signOut.status).to.equal(403);

      const after = await consoleClient(system, cookie).listApiKeys({ projectId: acme.projectId });
      expect(after.keys.length).to.equal(before);
      // The same request from the console's own page goes through.
      const own = await createKey(cookie, { "sec-fetch-site": "same-origin", origin: system.consoleUrl });
      expect(own.status).to.equal(200);
      secrets.push(((await own.json()) as { secret: string }).secret);
    });

    it("answers a read made over GET (Connect's GET for reads) with Cache-Control: no-store", async () => {
      const cookie = await signIn(system, acme.ownerId);
      const read = (method: string, message: object, headers: Record<string, string> = {}) => {
        const query = new URLSearchParams({
          connect: "v1",
          encoding: "json",
          message: JSON.stringify(message),
        });
        return fetch(`${system.consoleUrl}/api/testrun.console.v1.ConsoleService/${method}?${query}`, {
          headers,
        });
      };
      const project = await read("GetProject", { projectId: acme.projectId }, { cookie });
      expect(project.status).to.equal(200);
      expect(await project.json()).to.have.nested.property("project.id", acme.projectId);
      expect(project.headers.get("cache-control")).to.equal("no-store");
      const options = await read("GetSignInOptions", {});
      expect(options.status).to.equal(200);
      expect(options.headers.get("cache-control")).to.equal("no-store");
    });

    it("serves every page with a strict Content-Security-Policy and the app for deep links", async () => {
      for (const path of ["/", `/projects/${acme.projectId}/settings/api`, "/sign-in"]) {
        const page = await fetch(`${system.consoleUrl}${path}`);
        expect(page.status, path).to.equal(200);
        expect(page.headers.get("content-type")).to.match(/^text\/html/);
        const csp = page.headers.get("content-security-policy") ?? "";
        expect(csp)
          .to.contain("default-src 'none'")
          .and.contain("script-src 'self'")
          .and.contain("frame-ancestors 'none'");
        expect(csp).not.to.contain("unsafe-inline");
        expect(page.headers.get("x-content-type-options")).to.equal("nosniff");
        expect(await page.text()).to.contain('<div id="root">');
      }
    });
  });

  // Last (mocha runs a suite's own tests before its nested suites): by now every secret was seen.
  describe("logs", () => {
    it("no secret, session id or link token in any log line", () => {
      expect(secrets.length).to.be.greaterThan(4);
      for (const [name, child] of system.processes) {
        const output = child.output().join("\n");
        for (const secret of secrets)
          expect(output.includes(secret), `${name} logged a secret`).to.equal(false);
      }
    });
  });
});
