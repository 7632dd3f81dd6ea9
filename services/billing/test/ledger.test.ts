import { Code, ConnectError } from "@connectrpc/connect";
import { BillingService, LedgerEntryKind } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Orm, ServiceWiring } from "@testrun/kit";
import { newId } from "@testrun/kit";
import {
  type InProcessCatalog,
  member,
  migratedTestDatabase,
  operator,
  seedOrganization,
  startInProcessCatalog,
} from "@testrun/testing";
import { expect } from "chai";

// In-process (docs/development.md, "Tests"): billing and a real catalog served by one router
// transport, on the test run's PostgreSQL; billing.test.ts covers the wire and the process.
describe("billing credits with a real catalog", () => {
  let catalog: InProcessCatalog;
  let orm: Orm;
  let billing: ServiceWiring;
  let projectId: string;
  let viewerId: string;

  const client = () => catalog.rpc.client(BillingService, String(catalog.env.SERVICE_TOKEN));
  const codeOf = (call: Promise<unknown>) =>
    call.then(
      () => "OK",
      (e) => Code[ConnectError.from(e).code],
    );
  const grant = (amount: bigint, idempotencyKey: string) =>
    client().grantCredits({ actor: operator(), projectId, amount, reason: "test grant", idempotencyKey });
  const balance = async () => (await client().getBalance({ actor: operator(), projectId })).balance;

  before(async () => {
    catalog = await startInProcessCatalog();
    // By import(), as @testrun/testing loads the catalog: the kit's copy of MikroORM.
    const { database, wireBilling } = await import("../src/wiring.js");
    ({ orm } = await migratedTestDatabase(database, catalog.env.DATABASE_URL));
    // Billing asks the catalog in-process, as it asks it over gRPC when deployed.
    billing = wireBilling({
      orm,
      catalog: catalog.rpc.client(CatalogService, String(catalog.env.SERVICE_TOKEN)),
    });
    catalog.rpc.serve(...billing.services);
  });
  beforeEach(async () => {
    const seeded = await seedOrganization(catalog.catalog);
    projectId = seeded.projectId;
    viewerId = seeded.members.viewer;
  });
  after(async () => {
    await billing?.stop();
    await orm?.close();
    await catalog?.stop();
  });

  it("grants idempotently per key, and refuses a reused key with another amount", async () => {
    const first = await grant(7n, "invoice-1");
    const again = await grant(7n, "invoice-1");
    expect(first.balance).to.equal(7n);
    expect(again.entry?.id).to.equal(first.entry?.id);
    expect(await balance()).to.equal(7n);
    expect(await codeOf(grant(8n, "invoice-1"))).to.equal("AlreadyExists");
  });

  it("lets only operators grant, any member read, and no one reach an unknown project", async () => {
    const asViewer = client().grantCredits({
      actor: member(viewerId),
      projectId,
      amount: 1n,
      reason: "x",
      idempotencyKey: "k",
    });
    expect(await codeOf(asViewer)).to.equal("PermissionDenied");
    expect((await client().getBalance({ actor: member(viewerId), projectId })).balance).to.equal(0n);
    expect(await codeOf(client().getBalance({ actor: operator(), projectId: newId("prj") }))).to.equal(
      "NotFound",
    );
  });

  it("spends exactly the balance under 30 concurrent charges, and the ledger sums to the balance", async () => {
    await grant(7n, "invoice-concurrent");
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, () =>
        codeOf(client().chargeRun({ projectId, runId: newId("run"), amount: 1n })),
      ),
    );
    expect(outcomes.filter((o) => o === "OK")).to.have.length(7);
    expect(outcomes.filter((o) => o === "FailedPrecondition")).to.have.length(23);
    expect(await balance()).to.equal(0n);
    const { entries } = await client().listLedger({ actor: operator(), projectId, pageSize: 500 });
    expect(entries.reduce((sum, e) => sum + e.amount, 0n)).to.equal(0n);
    expect(entries.filter((e) => e.kind === LedgerEntryKind.CHARGE)).to.have.length(7);
  });

  it("charges a run once however often it is retried, and refunds at most its charge, once", async () => {
    await grant(10n, "invoice-refund");
    const runId = newId("run");
    const charge = await client().chargeRun({ projectId, runId, amount: 4n });
    const retried = await client().chargeRun({ projectId, runId, amount: 4n });
    expect(retried.entry?.id).to.equal(charge.entry?.id);
    expect(await balance()).to.equal(6n);

    expect(await codeOf(client().refundRun({ projectId, runId, amount: 5n, reason: "too much" }))).to.equal(
      "FailedPrecondition",
    );
    const refund = await client().refundRun({
      projectId,
      runId,
      amount: 3n,
      reason: "environment unreachable",
    });
    const again = await client().refundRun({
      projectId,
      runId,
      amount: 3n,
      reason: "environment unreachable",
    });
    expect(again.entry?.id).to.equal(refund.entry?.id);
    expect(await balance()).to.equal(9n);
    expect(
      await codeOf(
        client().refundRun({ projectId, runId: newId("run"), amount: 1n, reason: "never charged" }),
      ),
    ).to.equal("NotFound");
  });

  it("charges a run once when its retries arrive together, and refuses a retry with another amount", async () => {
    await grant(10n, "invoice-retries");
    const runId = newId("run");
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => client().chargeRun({ projectId, runId, amount: 3n })),
    );
    expect(new Set(answers.map((a) => a.entry?.id)).size).to.equal(1);
    expect(answers.map((a) => a.balance)).to.deep.equal(Array(8).fill(7n));
    expect(await balance()).to.equal(7n);
    expect(await codeOf(client().chargeRun({ projectId, runId, amount: 2n }))).to.equal("AlreadyExists");
    expect(await balance()).to.equal(7n);
  });

  it("voids a run refunded before any charge: its late charge is refused and takes nothing", async () => {
    await grant(20n, "invoice-void");
    const runId = newId("run");
    const refund = () => client().refundRun({ projectId, runId, amount: 2n, reason: "start failed" });
    expect(await codeOf(refund())).to.equal("NotFound");
    expect(await codeOf(refund())).to.equal("NotFound");
    expect(await codeOf(client().chargeRun({ projectId, runId, amount: 2n }))).to.equal("Aborted");
    expect(await balance()).to.equal(20n);
    const { entries } = await client().listLedger({ actor: operator(), projectId, runId });
    expect(entries).to.deep.equal([]);
    // Charge and refund of one run racing each other: whichever lands first, nothing is lost.
    const races = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const id = newId("run");
        const [charged] = await Promise.all([
          codeOf(client().chargeRun({ projectId, runId: id, amount: 1n })),
          codeOf(client().refundRun({ projectId, runId: id, amount: 1n, reason: "start failed" })),
        ]);
        return charged;
      }),
    );
    // A charge that landed first was refunded; one that came second was refused.
    expect(races.filter((code) => code !== "OK" && code !== "Aborted")).to.deep.equal([]);
    expect(await balance()).to.equal(20n);
  });

  it("pages the ledger newest first", async () => {
    for (const key of ["a", "b", "c"]) await grant(1n, `page-${key}`);
    const first = await client().listLedger({ actor: operator(), projectId, pageSize: 2 });
    const second = await client().listLedger({
      actor: operator(),
      projectId,
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    expect(first.entries.map((e) => e.idempotencyKey)).to.deep.equal(["page-c", "page-b"]);
    expect(second.entries.map((e) => e.idempotencyKey)).to.deep.equal(["page-a"]);
    expect(second.nextPageToken).to.equal("");
    expect(first.entries[0]?.balanceAfter).to.equal(3n);
  });
});
