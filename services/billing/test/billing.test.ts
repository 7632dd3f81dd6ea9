import { setTimeout } from "node:timers/promises";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@testrun/gen/grpc/health/v1/health_pb";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { InsufficientCreditsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { newId, serviceClient } from "@testrun/kit";
import {
  createMigratedTestDatabase,
  repoRoot,
  type ServiceProcess,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import pg from "pg";

/** A BillingService client as another codebase builds it: grpc-js from the .proto files alone. */
function grpcJsBillingClient(
  address: string,
): grpc.Client & Record<string, grpc.MethodDefinition<object, object>> {
  const definition = protoLoader.loadSync("testrun/billing/v1/billing.proto", {
    includeDirs: [`${repoRoot}proto`],
    longs: String,
    enums: String,
    defaults: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    testrun: { billing: { v1: { BillingService: grpc.ServiceClientConstructor } } };
  };
  return new loaded.testrun.billing.v1.BillingService(address, grpc.credentials.createInsecure()) as never;
}

/** Calls a unary method of a grpc-js client, resolving with the error or the response. */
function callGrpcJs(
  client: grpc.Client,
  method: string,
  request: object,
  metadata = new grpc.Metadata(),
): Promise<{ error: grpc.ServiceError | null; response: unknown }> {
  return new Promise((resolve) => {
    (client as unknown as Record<string, (...args: unknown[]) => void>)[method]?.(
      request,
      metadata,
      (error: grpc.ServiceError | null, response: unknown) => resolve({ error, response }),
    );
  });
}

describe("billing service over real gRPC", () => {
  const tokens = testTokens();
  let env: Record<string, string>;
  let billing: ServiceProcess;

  before(async () => {
    env = {
      ...tokens,
      DATABASE_URL: await createMigratedTestDatabase(["billing"]),
      // Charge and refund never consult the catalog.
      CATALOG_URL: "http://127.0.0.1:1",
    };
  });
  beforeEach(async () => {
    billing = await startServiceProcess("billing", env);
  });
  afterEach(async () => {
    await billing.stop("SIGKILL");
  });

  const connectClient = (token = tokens.SERVICE_TOKEN) =>
    serviceClient(BillingService, billing.url, { token, timeoutMs: 30_000 });

  describe("a @grpc/grpc-js client built from proto/ with @grpc/proto-loader", () => {
    const authorized = () => {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${tokens.SERVICE_TOKEN}`);
      return metadata;
    };

    it("gets FAILED_PRECONDITION with a readable message when credits are short", async () => {
      const client = grpcJsBillingClient(`127.0.0.1:${billing.port}`);
      const { error } = await callGrpcJs(
        client,
        "ChargeRun",
        { projectId: newId("prj"), runId: newId("run"), amount: "3" },
        authorized(),
      );
      client.close();
      expect(error?.code).to.equal(grpc.status.FAILED_PRECONDITION);
      expect(error?.details).to.equal("not enough credits: 3 needed, 0 available");
      expect(error?.metadata.get("grpc-status-details-bin")).to.have.length(1);
    });

    it("gets INVALID_ARGUMENT naming the field for a bad request", async () => {
      const client = grpcJsBillingClient(`127.0.0.1:${billing.port}`);
      const { error } = await callGrpcJs(
        client,
        "ChargeRun",
        { projectId: newId("prj"), amount: "1" },
        authorized(),
      );
      client.close();
      expect(error?.code).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(error?.details).to.equal("run_id is required");
    });

    it("is refused with UNAUTHENTICATED without the service token", async () => {
      const client = grpcJsBillingClient(`127.0.0.1:${billing.port}`);
      const { error } = await callGrpcJs(client, "ChargeRun", {
        projectId: newId("prj"),
        runId: newId("run"),
        amount: "1",
      });
      client.close();
      expect(error?.code).to.equal(grpc.status.UNAUTHENTICATED);
      expect(error?.details).to.equal("missing or invalid service token");
    });
  });

  it("refuses a wrong token and the executor's token (billing is not for executors)", async () => {
    const request = { projectId: newId("prj"), runId: newId("run"), amount: 1n };
    const wrong = await connectClient("not-the-token-at-all-not-the-token")
      .chargeRun(request)
      .catch((e) => e);
    expect(ConnectError.from(wrong).code).to.equal(Code.Unauthenticated);
    const executor = await connectClient(tokens.EXECUTOR_TOKEN)
      .chargeRun(request)
      .catch((e) => e);
    expect(ConnectError.from(executor).code).to.equal(Code.PermissionDenied);
  });

  it("carries required and available in an InsufficientCredits detail", async () => {
    const error = await connectClient()
      .chargeRun({ projectId: newId("prj"), runId: newId("run"), amount: 7n })
      .catch((e) => ConnectError.from(e));
    const [detail] = (error as ConnectError).findDetails(InsufficientCreditsSchema);
    expect(detail?.required).to.equal(7n);
    expect(detail?.available).to.equal(0n);
  });

  it("lets a call in flight at SIGTERM finish with its real answer, then exits 0", async () => {
    const runId = newId("run");
    // A charge waits for the run's lock; holding it from outside keeps the call in flight.
    const blocker = new pg.Client({ connectionString: env.DATABASE_URL });
    await blocker.connect();
    await blocker.query("select pg_advisory_lock(hashtext($1))", [`charge:${runId}`]);

    const inFlight = connectClient()
      .chargeRun({ projectId: newId("prj"), runId, amount: 2n })
      .then(
        () => "ok",
        (e) => Code[ConnectError.from(e).code],
      );
    await waitForLockWaiter(blocker);

    const health = createClient(Health, createGrpcTransport({ baseUrl: billing.url }));
    const watch = health.watch({ service: "" })[Symbol.asyncIterator]();
    expect((await watch.next()).value?.status).to.equal(Status.SERVING);

    const exited = billing.stop("SIGTERM");
    // The process no longer reports SERVING, yet stays up while the call runs.
    expect((await watch.next()).value?.status).to.equal(Status.NOT_SERVING);
    expect(billing.process.exitCode).to.equal(null);

    await blocker.query("select pg_advisory_unlock(hashtext($1))", [`charge:${runId}`]);
    await blocker.end();
    // It got its real answer (no credits: FailedPrecondition), not a cut-off.
    expect(await inFlight).to.equal("FailedPrecondition");
    expect(await exited).to.equal(0);
  });
});

/** Resolves once some session waits on an advisory lock: the charge reached the database. */
async function waitForLockWaiter(client: pg.Client): Promise<void> {
  // Postgres has no notification for "a session started waiting"; polling pg_stat_activity is the
  // documented way to observe it, and each round is a real query, not a timed guess.
  for (;;) {
    const { rows } = await client.query(
      // This test's database only: the other mocha workers' claims take advisory locks too.
      `select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and wait_event = 'advisory' and datname = current_database()`,
    );
    if (rows[0].n > 0) return;
    await setTimeout(10);
  }
}
