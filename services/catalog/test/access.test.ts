import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { MemberState, Permission, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import {
  apiKey,
  type Catalog,
  httpStep,
  type InProcessCatalog,
  member,
  operator,
  rejects,
  seedOrganization,
  startInProcessCatalog,
  unique,
} from "@testrun/testing";
import { expect } from "chai";

describe("catalog: members, roles and rights", () => {
  let h: InProcessCatalog;
  let catalog: Catalog;

  before(async () => {
    h = await startInProcessCatalog();
    catalog = h.catalog;
  });
  after(async () => {
    await h.stop();
  });

  describe("each role on representative RPCs", () => {
    let seed: Awaited<ReturnType<typeof seedOrganization>>;
    before(async () => {
      seed = await seedOrganization(catalog);
      await catalog.createEnvironment({
        actor: operator(),
        projectId: seed.projectId,
        name: "staging",
        baseUrl: "https://staging.example.com",
      });
      await catalog.createTestCase({
        actor: operator(),
        projectId: seed.projectId,
        name: "smoke",
        tags: ["smoke"],
        steps: [httpStep()],
      });
    });

    /** What each role may do, as the rights table of actor.proto says. */
    const expected: Record<"owner" | "admin" | "editor" | "viewer", Record<string, boolean>> = {
      owner: {
        read: true,
        settings: true,
        edit: true,
        run: true,
        admin: true,
        addMember: true,
        addOwner: true,
      },
      admin: {
        read: true,
        settings: true,
        edit: true,
        run: true,
        admin: true,
        addMember: true,
        addOwner: false,
      },
      editor: {
        read: true,
        settings: true,
        edit: true,
        run: true,
        admin: false,
        addMember: false,
        addOwner: false,
      },
      viewer: {
        read: true,
        settings: true,
        edit: false,
        run: false,
        admin: false,
        addMember: false,
        addOwner: false,
      },
    };

    for (const [role, rights] of Object.entries(expected)) {
      it(`${role}: ${Object.entries(rights)
        .map(([what, ok]) => `${what} ${ok ? "allowed" : "denied"}`)
        .join(", ")}`, async () => {
        const actor = member(seed.members[role as keyof typeof seed.members]);
        const projectId = seed.projectId;
        const attempts: Record<string, () => Promise<unknown>> = {
          read: () => catalog.getProject({ actor, projectId, includeContents: true }),
          settings: () => catalog.listVariables({ actor, projectId }),
          edit: () =>
            catalog.createEnvironment({
              actor,
              projectId,
              name: unique("env"),
              baseUrl: "https://x.example.com",
            }),
          run: () =>
            catalog.resolveRunSelection({
              actor,
              projectId,
              selection: { case: "tags", value: { tags: ["smoke"] } },
            }),
          admin: () => catalog.updateProject({ actor, projectId, description: `changed by ${role}` }),
          addMember: () =>
            catalog.addMember({
              actor,
              organizationId: seed.orgId,
              email: `${unique("new").replaceAll(" ", ".")}@example.com`,
              displayName: "New",
              role: Role.VIEWER,
            }),
          addOwner: () =>
            catalog.addMember({
              actor,
              organizationId: seed.orgId,
              email: `${unique("new-owner").replaceAll(" ", ".")}@example.com`,
              displayName: "New owner",
              role: Role.OWNER,
            }),
        };
        for (const [what, allowed] of Object.entries(rights)) {
          const attempt = attempts[what];
          if (!attempt) throw new Error(`no attempt for ${what}`);
          if (allowed) await attempt();
          else await rejects(attempt(), Code.PermissionDenied);
        }
        // CheckAccess tells other services the same, with the member's role.
        const roleOf = { owner: Role.OWNER, admin: Role.ADMIN, editor: Role.EDITOR, viewer: Role.VIEWER }[
          role
        ];
        const access = await catalog.checkAccess({ actor, projectId, permission: Permission.READ });
        expect(access).to.include({ organizationId: seed.orgId, role: roleOf });
        const startRun = catalog.checkAccess({ actor, projectId, permission: Permission.START_RUN });
        if (rights.run) await startRun;
        else await rejects(startRun, Code.PermissionDenied);
      });
    }

    it("an operator may do everything; only an operator may create organizations", async () => {
      const access = await catalog.checkAccess({
        actor: operator(),
        projectId: seed.projectId,
        permission: Permission.ADMIN,
      });
      expect(access).to.include({ organizationId: seed.orgId, role: Role.UNSPECIFIED });
      for (const id of Object.values(seed.members)) {
        await rejects(catalog.createOrganization({ actor: member(id), name: "mine" }), Code.PermissionDenied);
      }
    });

    it("an API key reads content and starts runs, and nothing else", async () => {
      const actor = apiKey(seed.members.editor, seed.projectId, new Date(Date.now() - 60_000));
      const projectId = seed.projectId;
      await catalog.getProject({ actor, projectId });
      await catalog.listTestCases({ actor, projectId });
      await catalog.resolveRunSelection({
        actor,
        projectId,
        selection: { case: "tags", value: { tags: ["smoke"] } },
      });
      for (const permission of [Permission.READ, Permission.START_RUN])
        await catalog.checkAccess({ actor, projectId, permission });
      for (const permission of [Permission.READ_SETTINGS, Permission.EDIT, Permission.ADMIN])
        await rejects(catalog.checkAccess({ actor, projectId, permission }), Code.PermissionDenied);
      await rejects(catalog.listVariables({ actor, projectId }), Code.PermissionDenied);
      await rejects(
        catalog.createEnvironment({ actor, projectId, name: "x", baseUrl: "https://x.example.com" }),
        Code.PermissionDenied,
      );
      await rejects(catalog.updateProject({ actor, projectId, name: "renamed" }), Code.PermissionDenied);
      await rejects(catalog.listMembers({ actor, organizationId: seed.orgId }), Code.PermissionDenied);
      await rejects(catalog.listProjects({ actor, organizationId: seed.orgId }), Code.PermissionDenied);
      await rejects(catalog.getOrganization({ actor, organizationId: seed.orgId }), Code.PermissionDenied);
      // A key of a VIEWER never worked: the creator must be EDITOR or above.
      const viewerKey = apiKey(seed.members.viewer, projectId, new Date(Date.now() - 60_000));
      await rejects(catalog.getProject({ actor: viewerKey, projectId }), Code.PermissionDenied);
    });

    it("refuses a missing actor, an unknown permission and an unknown member", async () => {
      const missingActor = await rejects(
        catalog.checkAccess({ projectId: seed.projectId, permission: Permission.READ }),
        Code.InvalidArgument,
      );
      expect(missingActor.rawMessage).to.equal("actor is required");
      await rejects(
        catalog.checkAccess({
          actor: operator(),
          projectId: seed.projectId,
          permission: Permission.UNSPECIFIED,
        }),
        Code.InvalidArgument,
      );
      await rejects(
        catalog.getProject({ actor: member("mem_00000000000000000000000000"), projectId: seed.projectId }),
        Code.PermissionDenied,
      );
    });

    it("a member of another organization sees nothing of this one (NOT_FOUND)", async () => {
      const other = await seedOrganization(catalog);
      const actor = member(other.members.owner);
      await rejects(catalog.getProject({ actor, projectId: seed.projectId }), Code.NotFound);
      await rejects(catalog.getOrganization({ actor, organizationId: seed.orgId }), Code.NotFound);
      await rejects(catalog.listMembers({ actor, organizationId: seed.orgId }), Code.NotFound);
      await rejects(catalog.getMember({ actor, memberId: seed.members.viewer }), Code.NotFound);
      await rejects(
        catalog.checkAccess({ actor, projectId: seed.projectId, permission: Permission.READ }),
        Code.NotFound,
      );
      const { organizations } = await catalog.listOrganizations({ actor });
      expect(organizations.map((o) => o.id)).to.deep.equal([other.orgId]);
    });
  });

  describe("managing members", () => {
    it("only an OWNER (or an operator) gives, takes or changes the OWNER role", async () => {
      const seed = await seedOrganization(catalog);
      const admin = member(seed.members.admin);
      await rejects(
        catalog.changeMemberRole({ actor: admin, memberId: seed.members.owner, role: Role.ADMIN }),
        Code.PermissionDenied,
      );
      await rejects(
        catalog.changeMemberRole({ actor: admin, memberId: seed.members.editor, role: Role.OWNER }),
        Code.PermissionDenied,
      );
      await rejects(
        catalog.removeMember({ actor: admin, memberId: seed.members.owner }),
        Code.PermissionDenied,
      );
      // An ADMIN manages the others.
      const changed = await catalog.changeMemberRole({
        actor: admin,
        memberId: seed.members.viewer,
        role: Role.EDITOR,
      });
      expect(changed.member?.role).to.equal(Role.EDITOR);
      // An EDITOR manages nobody but may leave.
      const editor = member(seed.members.editor);
      await rejects(
        catalog.changeMemberRole({ actor: editor, memberId: seed.members.viewer, role: Role.VIEWER }),
        Code.PermissionDenied,
      );
      await rejects(
        catalog.removeMember({ actor: editor, memberId: seed.members.viewer }),
        Code.PermissionDenied,
      );
      const left = await catalog.removeMember({ actor: editor, memberId: seed.members.editor });
      expect(left.member?.state).to.equal(MemberState.REMOVED);
      // Removed, it may do nothing at all.
      await rejects(catalog.getProject({ actor: editor, projectId: seed.projectId }), Code.PermissionDenied);
      await rejects(catalog.listOrganizations({ actor: editor }), Code.PermissionDenied);
    });

    it("never leaves an organization without an active OWNER", async () => {
      const seed = await seedOrganization(catalog);
      const owner = member(seed.members.owner);
      const demote = await rejects(
        catalog.changeMemberRole({ actor: owner, memberId: seed.members.owner, role: Role.ADMIN }),
        Code.FailedPrecondition,
      );
      expect(demote.rawMessage).to.contain("without an active OWNER");
      await rejects(
        catalog.removeMember({ actor: operator(), memberId: seed.members.owner }),
        Code.FailedPrecondition,
      );
      await catalog.changeMemberRole({ actor: owner, memberId: seed.members.admin, role: Role.OWNER });
      const stepDown = await catalog.changeMemberRole({
        actor: owner,
        memberId: seed.members.owner,
        role: Role.ADMIN,
      });
      expect(stepDown.member?.role).to.equal(Role.ADMIN);
    });

    it("validates new members and refuses a second active member with the same email, ignoring case", async () => {
      const seed = await seedOrganization(catalog);
      const add = (email: string, displayName = "Ann", role = Role.EDITOR) =>
        catalog.addMember({ actor: operator(), organizationId: seed.orgId, email, displayName, role });
      const email = `${unique("ann").replaceAll(" ", ".")}@Example.com`;
      const first = await add(email);
      await rejects(add(email.toUpperCase()), Code.AlreadyExists);
      const bad = await rejects(add("not-an-email", " ", Role.UNSPECIFIED), Code.InvalidArgument);
      expect(bad.rawMessage).to.match(/^email: must be an email address/);
      const [details] = bad.findDetails(FieldViolationsSchema);
      expect(details?.violations.map((v) => v.field)).to.deep.equal(["email", "display_name", "role"]);
      await rejects(
        catalog.addMember({
          actor: operator(),
          organizationId: "org_nope",
          email,
          displayName: "x",
          role: Role.VIEWER,
        }),
        Code.NotFound,
      );
      expect(first.member).to.include({
        // Stored in its normal form (lower case): services/catalog/test/emails.test.ts.
        email: email.toLowerCase(),
        displayName: "Ann",
        role: Role.EDITOR,
        state: MemberState.ACTIVE,
      });
    });

    it("lists members oldest first in pages, removed ones only when asked", async () => {
      const seed = await seedOrganization(catalog);
      await catalog.removeMember({ actor: operator(), memberId: seed.members.viewer });
      const all: string[] = [];
      let pageToken = "";
      do {
        const page = await catalog.listMembers({
          actor: member(seed.members.admin),
          organizationId: seed.orgId,
          includeRemoved: true,
          pageSize: 3,
          pageToken,
        });
        expect(page.members.length).to.be.at.most(3);
        all.push(...page.members.map((m) => m.id));
        pageToken = page.nextPageToken;
      } while (pageToken);
      expect(all).to.deep.equal([
        seed.members.owner,
        seed.members.admin,
        seed.members.editor,
        seed.members.viewer,
      ]);
      const active = await catalog.listMembers({ actor: operator(), organizationId: seed.orgId });
      expect(active.members.map((m) => m.id)).to.not.include(seed.members.viewer);
      await rejects(
        catalog.listMembers({ actor: operator(), organizationId: seed.orgId, pageToken: "garbage" }),
        Code.InvalidArgument,
      );
      await rejects(
        catalog.listMembers({ actor: operator(), organizationId: seed.orgId, pageSize: -1 }),
        Code.InvalidArgument,
      );
    });
  });

  describe("losing EDITOR-or-above rights", () => {
    const lostAt = (m: { rightsLostAt?: Parameters<typeof timestampDate>[0] } | undefined) =>
      m?.rightsLostAt ? timestampDate(m.rightsLostAt) : undefined;

    it("is recorded, kills the member's older keys for good, and a key made after regaining EDITOR works", async () => {
      const seed = await seedOrganization(catalog);
      const { projectId } = seed;
      const editorId = seed.members.editor;
      await catalog.createEnvironment({
        actor: operator(),
        projectId,
        name: "prod",
        baseUrl: "https://example.com",
      });
      const oldKey = apiKey(editorId, projectId, new Date(Date.now() - 60_000));
      const read = (actor: ReturnType<typeof apiKey>) => catalog.getProject({ actor, projectId });
      await read(oldKey);

      // Made VIEWER: the keys service is unreachable (KEYS_URL points nowhere), the catalog answers anyway.
      const warned = h.logLine(
        (line) => line.includes("the notification stays queued") && line.includes(editorId),
      );
      const before = Date.now();
      const viewer = await catalog.changeMemberRole({
        actor: member(seed.members.owner),
        memberId: editorId,
        role: Role.VIEWER,
      });
      const lost = lostAt(viewer.member);
      expect(lost?.getTime()).to.be.within(before, Date.now());

      const refused = await rejects(read(oldKey), Code.PermissionDenied);
      expect(refused.rawMessage).to.equal(
        "the key's creator is no longer an Editor or above, so the key no longer works; create a new key",
      );
      const run = await rejects(
        catalog.resolveRunSelection({
          actor: oldKey,
          projectId,
          selection: { case: "tags", value: { tags: ["x"] } },
        }),
        Code.PermissionDenied,
      );
      expect(run.rawMessage).to.equal("the key's creator can no longer start runs");

      // The keys service is to be told, and the notification waits in the outbox until it answers.
      expect(JSON.parse(await warned)).to.include({
        level: "warn",
        kind: "disable_member_keys",
        code: "Unavailable",
      });
      const queued = await h.db.query(
        "select kind, lost_at, attempts, last_error from catalog.key_notifications where member_id = $1",
        [editorId],
      );
      expect(queued.rows).to.have.length(1);
      expect(queued.rows[0]).to.include({
        kind: "disable_member_keys",
        attempts: 1,
        last_error: "Unavailable",
      });
      expect((queued.rows[0].lost_at as Date).getTime()).to.equal(lost?.getTime());

      // EDITOR again: rights_lost_at stays; the old key stays dead; a key made at the very moment of the
      // loss too; one made after it works.
      const again = await catalog.changeMemberRole({
        actor: operator(),
        memberId: editorId,
        role: Role.EDITOR,
      });
      expect(lostAt(again.member)?.getTime()).to.equal(lost?.getTime());
      await rejects(read(oldKey), Code.PermissionDenied);
      await rejects(read(apiKey(editorId, projectId, lost)), Code.PermissionDenied);
      const newKey = apiKey(editorId, projectId, new Date((lost?.getTime() ?? 0) + 1));
      await read(newKey);
      // Past the rights check: the selection is what fails (no test case has the tag).
      const nothing = await rejects(
        catalog.resolveRunSelection({
          actor: newKey,
          projectId,
          selection: { case: "tags", value: { tags: ["x"] } },
        }),
        Code.InvalidArgument,
      );
      expect(nothing.rawMessage).to.contain("nothing to run");

      // Removed: a new loss; reactivated with the same email: same member, loss kept, key still dead.
      const removed = await catalog.removeMember({ actor: operator(), memberId: editorId });
      const removedAt = lostAt(removed.member);
      expect(removedAt?.getTime()).to.be.greaterThan(lost?.getTime() ?? 0);
      await rejects(read(newKey), Code.PermissionDenied);
      const back = await catalog.addMember({
        actor: operator(),
        organizationId: seed.orgId,
        email: removed.member?.email.toUpperCase() ?? "",
        displayName: "Back again",
        role: Role.EDITOR,
      });
      expect(back.member?.id).to.equal(editorId);
      expect(back.member?.state).to.equal(MemberState.ACTIVE);
      expect(lostAt(back.member)?.getTime()).to.equal(removedAt?.getTime());
      await rejects(read(newKey), Code.PermissionDenied);
      await read(apiKey(editorId, projectId, new Date((removedAt?.getTime() ?? 0) + 1)));

      const notifications = await h.db.query(
        "select lost_at from catalog.key_notifications where member_id = $1 order by lost_at",
        [editorId],
      );
      expect(notifications.rows.map((r) => (r.lost_at as Date).getTime())).to.deep.equal([
        lost?.getTime(),
        removedAt?.getTime(),
      ]);
    });

    it("keeps telling the keys service, with growing waits, until it answers", async () => {
      const fast = await startInProcessCatalog({ KEYS_RETRY_MS: "50" });
      try {
        const other = await seedOrganization(fast.catalog);
        const memberId = other.members.editor;
        const retried = (attempts: number) =>
          fast.logLine((line) => line.includes(memberId) && line.includes(`"attempts":${attempts},`));
        await fast.catalog.removeMember({ actor: operator(), memberId });
        // The attempt made by RemoveMember itself, then the retry loop's.
        const first = JSON.parse(await retried(1));
        const third = JSON.parse(await retried(3));
        expect(first.retry_in_ms).to.equal(50);
        expect(third.retry_in_ms).to.equal(200);
        const row = await fast.db.query(
          "select attempts from catalog.key_notifications where member_id = $1",
          [memberId],
        );
        expect(row.rows[0].attempts).to.be.at.least(3);
      } finally {
        await fast.stop();
      }
    });

    it("is not a loss when an ADMIN becomes EDITOR, or when a VIEWER is removed", async () => {
      const seed = await seedOrganization(catalog);
      const demoted = await catalog.changeMemberRole({
        actor: operator(),
        memberId: seed.members.admin,
        role: Role.EDITOR,
      });
      expect(demoted.member?.rightsLostAt).to.equal(undefined);
      const removed = await catalog.removeMember({ actor: operator(), memberId: seed.members.viewer });
      expect(removed.member?.rightsLostAt).to.equal(undefined);
      expect(removed.member?.removedAt).to.not.equal(undefined);
      // Removing again changes nothing; changing a removed member's role is refused.
      const again = await catalog.removeMember({ actor: operator(), memberId: seed.members.viewer });
      expect(again.member?.removedAt).to.deep.equal(removed.member?.removedAt);
      await rejects(
        catalog.changeMemberRole({ actor: operator(), memberId: seed.members.viewer, role: Role.EDITOR }),
        Code.FailedPrecondition,
      );
      const queued = await h.db.query("select 1 from catalog.key_notifications where member_id = any($1)", [
        [seed.members.admin, seed.members.viewer],
      ]);
      expect(queued.rows).to.have.length(0);
    });
  });
});
