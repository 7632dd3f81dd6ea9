// Emails have one stored form (NFKC, then lower case) compared exactly, never with PostgreSQL's
// lower(): a lookalike address is the same address, in the organization it was added to only, and
// the migration brings existing rows to that form (docs/security.md, "Sign-in").
import { Code } from "@connectrpc/connect";
import { MemberState, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { migrateDatabase, openDatabase } from "@testrun/kit";
import {
  createTestDatabase,
  type InProcessCatalog,
  member,
  operator,
  rejects,
  startInProcessCatalog,
  unique,
} from "@testrun/testing";
import { expect } from "chai";
import { database } from "../src/db/index.js";

const kelvin = "\u212A"; // KELVIN SIGN: NFKC makes it "K", lower case "k".

describe("catalog: email addresses", () => {
  let harness: InProcessCatalog;

  before(async () => {
    harness = await startInProcessCatalog();
  });

  after(async () => {
    await harness?.stop();
  });

  const organization = async () => {
    const domain = `${unique("corp").replaceAll(" ", "-")}.example`;
    const { organization, owner } = await harness.catalog.createOrganization({
      actor: operator(),
      name: unique("org"),
      ownerEmail: `Owner@${domain.toUpperCase()}`,
      ownerDisplayName: "Olga",
    });
    return { id: organization?.id ?? "", ownerId: owner?.id ?? "", ownerEmail: owner?.email, domain };
  };

  it("an Admin adding a KELVIN SIGN address gets the plain one, in that organization only", async () => {
    const a = await organization();
    const b = await organization();
    const { member: kateInB } = await harness.catalog.addMember({
      actor: operator(),
      organizationId: b.id,
      email: `kate@${a.domain}`,
      displayName: "Kate",
      role: Role.OWNER,
    });
    const { member: admin } = await harness.catalog.addMember({
      actor: operator(),
      organizationId: a.id,
      email: `admin@${a.domain}`,
      displayName: "Adam",
      role: Role.ADMIN,
    });
    const { member: added } = await harness.catalog.addMember({
      actor: member(admin?.id ?? ""),
      organizationId: a.id,
      email: ` ${kelvin}ate@${a.domain.toUpperCase()} `,
      displayName: "Kate?",
      role: Role.VIEWER,
    });
    expect(added).to.include({ email: `kate@${a.domain}`, organizationId: a.id, state: MemberState.ACTIVE });
    expect(a.ownerEmail).to.equal(`owner@${a.domain}`);
    const stored = await harness.db.query(
      "select organization_id, email from catalog.members where id = $1",
      [added?.id],
    );
    expect(stored.rows).to.deep.equal([{ organization_id: a.id, email: `kate@${a.domain}` }]);
    // Org B's Kate is untouched, and the same address again in A is the same member.
    const inB = await harness.catalog.getMember({ actor: operator(), memberId: kateInB?.id ?? "" });
    expect(inB.member).to.include({ organizationId: b.id, role: Role.OWNER });
    await rejects(
      harness.catalog.addMember({
        actor: operator(),
        organizationId: a.id,
        email: `KATE@${a.domain}`,
        displayName: "Kate",
        role: Role.VIEWER,
      }),
      Code.AlreadyExists,
    );
    // Looking up by any spelling finds both memberships under the one stored address.
    const found = await harness.catalog.findMembersByEmail({
      actor: operator(),
      email: `${kelvin}ATE@${a.domain}`,
    });
    expect(found.members.map((m) => m.id).sort()).to.deep.equal([added?.id, kateInB?.id].sort());
  });

  it("a domain's Unicode spellings are one address: stored in ASCII (IDNA), found by any of them", async () => {
    const a = await organization();
    const label = a.domain.split(".")[0];
    const { member: kate } = await harness.catalog.addMember({
      actor: operator(),
      organizationId: a.id,
      email: `kate@${label}\u3002example`, // IDEOGRAPHIC FULL STOP
      displayName: "Kate",
      role: Role.VIEWER,
    });
    expect(kate?.email).to.equal(`kate@${a.domain}`);
    await rejects(
      harness.catalog.addMember({
        actor: operator(),
        organizationId: a.id,
        email: `kate@${a.domain}`,
        displayName: "Kate",
        role: Role.VIEWER,
      }),
      Code.AlreadyExists,
    );
    const { member: ulf } = await harness.catalog.addMember({
      actor: operator(),
      organizationId: a.id,
      email: `ulf@${label}-B\u00dcCHER.example`,
      displayName: "Ulf",
      role: Role.VIEWER,
    });
    expect(ulf?.email).to.match(/^ulf@xn--[a-z0-9-]+\.example$/);
    const found = await harness.catalog.findMembersByEmail({
      actor: operator(),
      email: `ULF@${label}-b\u00fccher\uFF0Eexample`, // FULLWIDTH FULL STOP
    });
    expect(found.members.map((m) => m.id)).to.deep.equal([ulf?.id]);
  });

  it("refuses what does not normalise to an address, naming the field", async () => {
    const a = await organization();
    for (const email of [
      `kate\u200b@${a.domain}`, // an invisible format character
      `ka te@${a.domain}`,
      `kate\uFF20x@${a.domain}`, // FULLWIDTH COMMERCIAL AT becomes a second "@"
      `kate@${a.domain}/x`, // URL syntax, which domainToASCII would cut at "/"
      `kate@${a.domain}%41`,
      "kate@a<b.example", // a domain IDNA does not map
      "kate@a\u0378b.example", // an unassigned code point
      "@",
      "\u00a0",
    ]) {
      const error = await rejects(
        harness.catalog.addMember({
          actor: operator(),
          organizationId: a.id,
          email,
          displayName: "X",
          role: Role.VIEWER,
        }),
        Code.InvalidArgument,
      );
      const [details] = error.findDetails(FieldViolationsSchema);
      expect(
        details?.violations.map((v) => v.field),
        JSON.stringify(email),
      ).to.deep.equal(["email"]);
    }
    const lookup = await rejects(
      harness.catalog.findMembersByEmail({ actor: operator(), email: "no address" }),
      Code.InvalidArgument,
    );
    expect(lookup.rawMessage).to.match(/^email: /);
    const { rows } = await harness.db.query(
      "select count(*)::int as n from catalog.members where organization_id = $1",
      [a.id],
    );
    expect(rows[0].n).to.equal(1);
  });

  it("the migration normalises stored emails; of two that collide, the active one keeps the address", async () => {
    const url = await createTestDatabase(String(process.env.DATABASE_URL));
    const orm = await openDatabase(url, database);
    try {
      await orm.em.getConnection().execute('create schema if not exists "catalog"');
      await orm.migrator.up({ to: "Migration20261123051413_members_by_email" });
      const sql = (text: string, params: unknown[] = []) => orm.em.getConnection().execute(text, params);
      await sql("insert into catalog.organizations (id, name, created_at) values ('org_a', 'A', now())");
      const insert = (id: string, email: string, role: string, removed: boolean) =>
        sql(
          `insert into catalog.members (id, organization_id, email, display_name, role, created_at, removed_at)
           values (?, 'org_a', ?, 'x', ?, now(), ${removed ? "now()" : "null"})`,
          [id, email, role],
        );
      // Whether lower() folds KELVIN SIGN depends on the locale: the collision is made with one
      // removed and one active member, which the old index allows in every locale only when the
      // spellings differ beyond case. "Ｋate" (FULLWIDTH K) folds in no locale's lower().
      await insert("mem_old", "kate@corp.example", "viewer", true);
      await insert("mem_new", "\uFF2Bate@corp.example", "editor", false);
      await insert("mem_twin", "\uFF4Bate@corp.example", "editor", false);
      await insert("mem_bob", "Bob@Corp.Example", "admin", false);
      // A domain spelled with IDEOGRAPHIC FULL STOP, and one in Unicode, get their ASCII form.
      await insert("mem_ann", "ann@corp\u3002example", "viewer", false);
      await insert("mem_ann_twin", "Ann@corp.example", "viewer", true);
      await insert("mem_ulf", "ulf@b\u00fccher.example", "viewer", false);
      await migrateDatabase(orm, database);

      const rows = await sql(
        "select id, email, removed_at is not null as removed, rights_lost_at is not null as lost from catalog.members order by id",
      );
      expect(rows).to.deep.equal([
        { id: "mem_ann", email: "ann@corp.example", removed: false, lost: false },
        {
          id: "mem_ann_twin",
          email: "Ann@corp.example (superseded by mem_ann)",
          removed: true,
          lost: false,
        },
        { id: "mem_bob", email: "bob@corp.example", removed: false, lost: false },
        // Active and oldest: keeps the address; the others are removed under a name no address equals.
        { id: "mem_new", email: "kate@corp.example", removed: false, lost: false },
        { id: "mem_old", email: "kate@corp.example (superseded by mem_new)", removed: true, lost: false },
        {
          id: "mem_twin",
          email: "\uFF4Bate@corp.example (superseded by mem_new)",
          removed: true,
          lost: true,
        },
        { id: "mem_ulf", email: "ulf@xn--bcher-kva.example", removed: false, lost: false },
      ]);
      // The twin was an active Editor: its keys die, as when RemoveMember removes one.
      const queued = await sql("select kind, member_id from catalog.key_notifications");
      expect(queued).to.deep.equal([{ kind: "disable_member_keys", member_id: "mem_twin" }]);
    } finally {
      await orm.close();
    }
  });
});
