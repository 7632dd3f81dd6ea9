import { Code } from "@connectrpc/connect";
import { configSchema } from "@testrun/catalog";
import { BillingService, LedgerEntryKind } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { loadConfig } from "@testrun/kit";
import {
  capturedLogger,
  eventually,
  inProcessRpc,
  member,
  migratedTestDatabase,
  operator,
  rejects,
  seedOrganization,
  startInProcessCatalog,
  testTokens,
  unique,
} from "@testrun/testing";
import { expect } from "chai";

/**
 * A catalog and a billing service on one router transport (each calls the other: the catalog
 * asks billing for a new project's credits, billing asks the catalog whether the project exists),
 * on one database. `billingServed: false` leaves billing out until `serveBilling`, as when it is down.
 */
async function startPair(env: Record<string, string>, billingServed = true) {
  const tokens = testTokens();
  const rpc = inProcessRpc({
    tokens: { service: tokens.SERVICE_TOKEN, executor: tokens.EXECUTOR_TOKEN },
    logger: capturedLogger("rpc", "warn").logger,
  });
  const catalog = await startInProcessCatalog(env, {
    rpc,
    tokens,
    billing: rpc.client(BillingService, tokens.SERVICE_TOKEN),
  });
  // By import(), as @testrun/testing loads the catalog: the kit's copy of MikroORM.
  const { database, wireBilling } = await import("../src/wiring.js");
  const { orm } = await migratedTestDatabase(database, catalog.env.DATABASE_URL);
  const billing = wireBilling({ orm, catalog: rpc.client(CatalogService, tokens.SERVICE_TOKEN) });
  const serveBilling = () => rpc.serve(...billing.services);
  if (billingServed) serveBilling();
  const client = rpc.client(BillingService, tokens.SERVICE_TOKEN);
  return {
    catalog,
    orm,
    billing,
    serveBilling,
    /** The project's ledger, oldest first. */
    ledger: async (projectId: string) =>
      (await client.listLedger({ actor: operator(), projectId })).entries.reverse(),
    balance: async (projectId: string) => (await client.getBalance({ actor: operator(), projectId })).balance,
    queued: async (projectId: string) =>
      (
        await catalog.db.query<{ credits: number; attempts: number }>(
          "select credits, attempts from catalog.key_notifications where project_id = $1 and kind = 'grant_new_project_credits'",
          [projectId],
        )
      ).rows,
    async stop() {
      await billing.stop();
      await orm.close();
      await catalog.stop();
    },
  };
}

type Pair = Awaited<ReturnType<typeof startPair>>;

describe("credits of a new project (NEW_PROJECT_CREDITS)", () => {
  let pair: Pair;
  let other: Pair | undefined;

  before(async () => {
    // A short retry wait: a grant delivered again by the retry loop shows at once.
    pair = await startPair({ NEW_PROJECT_CREDITS: "250", KEYS_RETRY_MS: "50" });
  });
  afterEach(async () => {
    await other?.stop();
    other = undefined;
  });
  after(async () => {
    await pair?.stop();
  });

  it("grants a project made by an operator (testrunctl) or an Admin (the console) its credits once, before CreateProject answers", async () => {
    const seed = await seedOrganization(pair.catalog.catalog);
    // seedOrganization's project was made by an operator, as `testrunctl project create` makes one.
    expect(await pair.balance(seed.projectId)).to.equal(250n);
    const { project } = await pair.catalog.catalog.createProject({
      actor: member(seed.members.admin),
      organizationId: seed.orgId,
      name: unique("console project"),
      description: "",
    });
    const projectId = project?.id ?? "";
    expect(await pair.balance(projectId)).to.equal(250n);
    const [grant, ...more] = await pair.ledger(projectId);
    expect(more).to.deep.equal([]);
    expect(grant).to.include({
      kind: LedgerEntryKind.GRANT,
      amount: 250n,
      balanceAfter: 250n,
      idempotencyKey: "new-project",
      reason: "granted to every new project (NEW_PROJECT_CREDITS)",
    });
    // Delivered: nothing left in the outbox.
    expect(await pair.queued(projectId)).to.deep.equal([]);
  });

  it("grants nothing more when CreateProject is retried (the name is taken) or the grant delivered again", async () => {
    const seed = await seedOrganization(pair.catalog.catalog);
    const name = unique("retried");
    const create = () =>
      pair.catalog.catalog.createProject({
        actor: operator(),
        organizationId: seed.orgId,
        name,
        description: "",
      });
    const { project } = await create();
    const projectId = project?.id ?? "";
    await rejects(create(), Code.AlreadyExists);
    // As if the catalog had stopped after billing granted but before the row was deleted: the
    // retry loop delivers the same grant a second time, and deletes the row once billing answers.
    await pair.catalog.db.query(
      `insert into catalog.key_notifications (id, kind, project_id, credits, created_at, attempts, next_attempt_at)
       values (gen_random_uuid(), 'grant_new_project_credits', $1, 250, now(), 0, now())`,
      [projectId],
    );
    await eventually(
      async () => ((await pair.queued(projectId)).length === 0 ? true : undefined),
      "the grant delivered again",
    );
    expect(await pair.balance(projectId)).to.equal(250n);
    expect(await pair.ledger(projectId)).to.have.length(1);
    expect(await pair.queued(projectId)).to.deep.equal([]);
  });

  it("queues the grant while billing is down and delivers it once billing answers", async () => {
    other = await startPair({ NEW_PROJECT_CREDITS: "40", KEYS_RETRY_MS: "50" }, false);
    const seed = await seedOrganization(other.catalog.catalog);
    // The project exists at once; its credits wait in the outbox, with the attempt counted.
    const [queued] = await other.queued(seed.projectId);
    expect(queued?.credits).to.equal(40);
    expect(queued?.attempts).to.be.at.least(1);
    other.serveBilling();
    await other.catalog.logLine(
      (line) =>
        line.includes(seed.projectId) && line.includes("billing service granted the new project its credits"),
    );
    expect(await other.balance(seed.projectId)).to.equal(40n);
    expect(await other.ledger(seed.projectId)).to.have.length(1);
  });

  it("owes nothing to a project deleted before its grant was delivered", async () => {
    other = await startPair({ NEW_PROJECT_CREDITS: "40", KEYS_RETRY_MS: "50" }, false);
    const seed = await seedOrganization(other.catalog.catalog);
    await other.catalog.catalog.deleteProject({ actor: operator(), projectId: seed.projectId });
    other.serveBilling();
    await other.catalog.logLine(
      (line) =>
        line.includes(seed.projectId) && line.includes("the new project was deleted before its grant"),
    );
    expect(await other.queued(seed.projectId)).to.deep.equal([]);
    const granted = await other.orm.em
      .fork()
      .execute("select 1 from billing.ledger_entries where project_id = ?", [seed.projectId]);
    expect(granted).to.deep.equal([]);
  });

  it("grants nothing, and queues nothing, when NEW_PROJECT_CREDITS is 0 (the default)", async () => {
    other = await startPair({});
    const seed = await seedOrganization(other.catalog.catalog);
    expect(await other.balance(seed.projectId)).to.equal(0n);
    expect(await other.ledger(seed.projectId)).to.deep.equal([]);
    expect(await other.queued(seed.projectId)).to.deep.equal([]);
  });

  describe("at most NEW_PROJECT_GRANTS_PER_ORGANIZATION grants per organization", () => {
    /** A project the organization's Admin creates (as in the console); its id. */
    const adminCreates = async (
      seed: Awaited<ReturnType<typeof seedOrganization>>,
      name = unique("farmed"),
    ) =>
      (
        await (other as Pair).catalog.catalog.createProject({
          actor: member(seed.members.admin),
          organizationId: seed.orgId,
          name,
          description: "",
        })
      ).project?.id ?? "";
    const grantsOf = async (orgId: string) =>
      (
        await (other as Pair).catalog.db.query<{ new_project_grants: number }>(
          "select new_project_grants from catalog.organizations where id = $1",
          [orgId],
        )
      ).rows[0]?.new_project_grants;

    it("grants the N+1th project of an organization nothing, even once a granted one is deleted; another organization still gets its own", async () => {
      other = await startPair({ NEW_PROJECT_CREDITS: "40", NEW_PROJECT_GRANTS_PER_ORGANIZATION: "2" });
      const seed = await seedOrganization(other.catalog.catalog);
      const second = await adminCreates(seed);
      expect(await other.balance(seed.projectId)).to.equal(40n);
      expect(await other.balance(second)).to.equal(40n);

      const third = await adminCreates(seed);
      expect(await other.balance(third)).to.equal(0n);
      expect(await other.ledger(third)).to.deep.equal([]);
      expect(await other.queued(third)).to.deep.equal([]);
      await other.catalog.logLine(
        (line) =>
          line.includes(third) &&
          line.includes(
            "the organization has had its 2 new-project grants (NEW_PROJECT_GRANTS_PER_ORGANIZATION)",
          ),
      );

      // Deleting a granted project gives no grant back: create-and-delete farms nothing.
      await other.catalog.catalog.deleteProject({ actor: member(seed.members.admin), projectId: second });
      const fourth = await adminCreates(seed);
      expect(await other.balance(fourth)).to.equal(0n);
      expect(await grantsOf(seed.orgId)).to.equal(2);

      const elsewhere = await seedOrganization(other.catalog.catalog);
      expect(await other.balance(elsewhere.projectId)).to.equal(40n);
      expect(await grantsOf(elsewhere.orgId)).to.equal(1);
    });

    it("grants exactly N when projects are created at once at the bound", async () => {
      other = await startPair({ NEW_PROJECT_CREDITS: "40", NEW_PROJECT_GRANTS_PER_ORGANIZATION: "3" });
      const seed = await seedOrganization(other.catalog.catalog);
      // One grant taken by seedOrganization's project; eight at once race for the last two.
      const projects = await Promise.all(Array.from({ length: 8 }, () => adminCreates(seed)));
      const balances = await Promise.all(projects.map((projectId) => (other as Pair).balance(projectId)));
      expect(balances.filter((balance) => balance === 40n)).to.have.length(2);
      expect(balances.filter((balance) => balance === 0n)).to.have.length(6);
      expect(await grantsOf(seed.orgId)).to.equal(3);
    });

    it("counts no grant for a project refused (its name taken) or when NEW_PROJECT_CREDITS is 0", async () => {
      other = await startPair({ NEW_PROJECT_CREDITS: "40", NEW_PROJECT_GRANTS_PER_ORGANIZATION: "2" });
      const seed = await seedOrganization(other.catalog.catalog);
      const name = unique("taken");
      await adminCreates(seed, name);
      await rejects(adminCreates(seed, name), Code.AlreadyExists);
      expect(await grantsOf(seed.orgId)).to.equal(2);
      await other.stop();
      other = undefined;
      other = await startPair({ NEW_PROJECT_GRANTS_PER_ORGANIZATION: "2" });
      const none = await seedOrganization(other.catalog.catalog);
      await adminCreates(none);
      expect(await grantsOf(none.orgId)).to.equal(0);
    });
  });

  it("refuses a NEW_PROJECT_GRANTS_PER_ORGANIZATION that is not a whole number from 0 to 1,000,000 (3 unless set)", () => {
    const env = { ...pair.catalog.env };
    delete env.NEW_PROJECT_GRANTS_PER_ORGANIZATION;
    expect(loadConfig(configSchema, env).NEW_PROJECT_GRANTS_PER_ORGANIZATION).to.equal(3);
    expect(
      loadConfig(configSchema, { ...env, NEW_PROJECT_GRANTS_PER_ORGANIZATION: "0" })
        .NEW_PROJECT_GRANTS_PER_ORGANIZATION,
    ).to.equal(0);
    for (const value of ["-1", "2.5", "1000001", "many"])
      expect(
        () => loadConfig(configSchema, { ...env, NEW_PROJECT_GRANTS_PER_ORGANIZATION: value }),
        value,
      ).to.throw(/NEW_PROJECT_GRANTS_PER_ORGANIZATION/);
  });

  it("refuses a NEW_PROJECT_CREDITS that is not a whole number from 0 to 1,000,000,000", () => {
    const env = { ...pair.catalog.env };
    expect(
      loadConfig(configSchema, { ...env, NEW_PROJECT_CREDITS: "1000000000" }).NEW_PROJECT_CREDITS,
    ).to.equal(1_000_000_000);
    for (const value of ["-1", "1.5", "1000000001", "lots"])
      expect(() => loadConfig(configSchema, { ...env, NEW_PROJECT_CREDITS: value }), value).to.throw(
        /NEW_PROJECT_CREDITS/,
      );
  });
});
