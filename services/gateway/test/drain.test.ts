import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { CatalogService, ListTestPlansResponseSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService, VerifyKeyResult } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunSchema, RunStatus, RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { bind, createLogger, type RpcServer, startRpcServer } from "@testrun/kit";
import {
  componentRedisUrl,
  eventually,
  type GatewayProcess,
  keyShapedSecret,
  startGateway,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import { call } from "./support.js";

/**
 * The gateway's downstream services, answering at once except for one project, whose test plans
 * are only listed once the test releases them: a request that is in flight for as long as the test wants.
 */
async function startSlowDownstream(serviceToken: string) {
  const slowKey = keyShapedSecret();
  let arrived: () => void = () => undefined;
  const slowCallArrived = new Promise<void>((resolve) => (arrived = resolve));
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));

  const server: RpcServer = await startRpcServer({
    host: "127.0.0.1",
    port: 0,
    tokens: { service: serviceToken },
    logger: createLogger("downstream", "silent"),
    services: [
      bind(KeysService, {
        verifyKey: ({ secret }) => ({
          result: VerifyKeyResult.VALID,
          keyId: "key_drain",
          projectId: secret === slowKey ? "prj_slow" : "prj_fast",
          creatorMemberId: "mem_drain",
          keyCreatedAt: timestampNow(),
        }),
        recordKeyUse: () => ({}),
      }),
      bind(CatalogService, {
        listTestPlans: async ({ projectId }) => {
          if (projectId === "prj_slow") {
            arrived();
            await released;
          }
          return create(ListTestPlansResponseSchema, { testPlans: [] });
        },
      }),
    ],
  });
  return { url: `http://127.0.0.1:${server.port}`, server, slowKey, slowCallArrived, release };
}

describe("gateway graceful shutdown", () => {
  const tokens = testTokens();
  let downstream: Awaited<ReturnType<typeof startSlowDownstream>>;
  let gateway: GatewayProcess;

  before(async () => {
    downstream = await startSlowDownstream(tokens.SERVICE_TOKEN);
    gateway = await startGateway({
      ...tokens,
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "gateway"),
      KEYS_URL: downstream.url,
      CATALOG_URL: downstream.url,
      RUNS_URL: downstream.url,
      // Long enough for the few requests below to be answered inside it, even on a busy machine.
      SHUTDOWN_DRAIN_MS: "3000",
      SHUTDOWN_TIMEOUT_MS: "30000",
    });
  });
  after(async () => {
    downstream?.release();
    await gateway?.stop("SIGKILL");
    await downstream?.server.shutdown(1_000);
  });

  const get = (path: string) => fetch(`${gateway.http}${path}`);
  const listTestPlans = (key: string) =>
    call(gateway.http, "/v1/test-plans", { headers: { authorization: `Bearer ${key}` } });

  it("keeps idle connections open longer than the proxies in front of it close theirs", async () => {
    const response = await get("/healthz");
    expect(response.headers.get("keep-alive"), "Keep-Alive header").to.equal("timeout=65");
  });

  it("on SIGTERM: not ready but still answering during the drain, then finishes the request in flight and exits 0", async () => {
    expect((await get("/readyz")).status, "ready before SIGTERM").to.equal(200);

    // A request that is in flight when SIGTERM arrives: its downstream call is held open.
    const inFlight = listTestPlans(downstream.slowKey);
    await downstream.slowCallArrived;
    const exitCode = gateway.stop("SIGTERM");

    // Readiness fails at once, liveness does not.
    await eventually(async () => ((await get("/readyz")).status === 503 ? true : undefined), "/readyz 503");
    expect((await get("/healthz")).status, "/healthz while draining").to.equal(200);
    // A new request, on a new connection, is still served end to end while the drain lasts.
    const during = await listTestPlans(keyShapedSecret());
    expect(during.status, JSON.stringify(during.body)).to.equal(200);
    expect(during.body).to.deep.equal({ testPlans: [] });
    expect(
      gateway.output().some((line) => line.includes('"msg":"closing"')),
      "the drain was still on when that request was answered",
    ).to.equal(false);

    // Once the drain is over the gateway takes no new connection…
    await gateway.waitForLine((line) => line.includes("http closed to new connections"), 15_000);
    const refused = await get("/healthz").then(
      () => undefined,
      (error: Error) => (error.cause as { code?: string } | undefined)?.code,
    );
    expect(refused, "a connection after the drain").to.equal("ECONNREFUSED");

    // …but the request in flight since before SIGTERM completes normally.
    downstream.release();
    const answer = await inFlight;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body).to.deep.equal({ testPlans: [] });
    expect(await exitCode).to.equal(0);
  });
});

describe("gateway shutdown with a long-poll in flight", function () {
  this.timeout(20_000);
  const tokens = testTokens();
  const secret = keyShapedSecret();
  const runId = "run_01m80000000000000000000000";
  const run = create(RunSchema, {
    id: runId,
    name: "never ends",
    status: RunStatus.RUNNING,
    startedAt: timestampNow(),
    url: `http://console.example/projects/prj_wait/runs/${runId}`,
  });
  let watching: () => void = () => undefined;
  const watchStarted = new Promise<void>((resolve) => (watching = resolve));
  let server: RpcServer;
  let gateway: GatewayProcess;

  before(async () => {
    server = await startRpcServer({
      host: "127.0.0.1",
      port: 0,
      tokens: { service: tokens.SERVICE_TOKEN },
      logger: createLogger("downstream", "silent"),
      services: [
        bind(KeysService, {
          verifyKey: () => ({
            result: VerifyKeyResult.VALID,
            keyId: "key_wait_drain",
            projectId: "prj_wait",
            creatorMemberId: "mem_wait",
            keyCreatedAt: timestampNow(),
          }),
          recordKeyUse: () => ({}),
        }),
        bind(RunsService, {
          // Sends the run once, then nothing until the caller goes away: a run that never finishes.
          async *watchRun(_req, context) {
            yield { run };
            watching();
            await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
          },
          getRun: () => ({ run }),
        }),
      ],
    });
    const url = `http://127.0.0.1:${server.port}`;
    gateway = await startGateway({
      ...tokens,
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "gateway"),
      KEYS_URL: url,
      CATALOG_URL: url,
      RUNS_URL: url,
      SHUTDOWN_DRAIN_MS: "500",
      SHUTDOWN_TIMEOUT_MS: "30000",
    });
  });
  after(async () => {
    await gateway?.stop("SIGKILL");
    await server?.shutdown(1_000);
  });

  it("answers a wait in flight with the run as it is once the drain is over, not after its 30 s, and exits 0", async () => {
    const waiting = call(gateway.http, `/v1/runs/${runId}?wait=30`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    await watchStarted;
    const exitCode = gateway.stop("SIGTERM");
    const answer = await waiting;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body).to.include({ id: runId, status: "RUNNING", finished: false });
    expect(await exitCode).to.equal(0);
  });
});
