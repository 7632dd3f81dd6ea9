import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import Router from "@koa/router";
import { CatalogService, CheckAccessResponseSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type MetricSample, sampleValue, scrapeMetrics, testTokens } from "@testrun/testing";
import { expect } from "chai";
import Koa from "koa";
import { pino } from "pino";
import { counter, gauge, httpMetricsMiddleware, initMetrics, serveMetrics } from "../src/metrics/index.js";
import { serviceClient } from "../src/rpc/client.js";
import { bind, type RpcServer, startRpcServer } from "../src/rpc/server.js";

describe("metrics (kit)", () => {
  const logger = pino({ level: "silent" });
  const tokens = testTokens();
  let metricsUrl: string;
  let closeMetrics: () => void;
  let rpc: RpcServer;
  let appUrl: string;
  let closeApp: () => void;

  before(async () => {
    initMetrics("kit-test");
    const metrics = await serveMetrics({ port: 0, host: "127.0.0.1", logger });
    metricsUrl = `http://127.0.0.1:${(metrics.address() as AddressInfo).port}/metrics`;
    closeMetrics = () => metrics.close();

    rpc = await startRpcServer({
      services: [
        bind(CatalogService, {
          checkAccess: (req) => {
            if (req.projectId === "prj_denied") throw new ConnectError("no", Code.PermissionDenied);
            return create(CheckAccessResponseSchema, { organizationId: "org_1" });
          },
        }),
      ],
      host: "127.0.0.1",
      port: 0,
      tokens: { service: tokens.SERVICE_TOKEN },
      logger,
    });

    const app = new Koa();
    const router = new Router();
    router.get("/v1/runs/:runId", (ctx) => {
      ctx.body = { id: ctx.params.runId };
    });
    router.get("/boom", () => {
      throw new Error("boom");
    });
    app.silent = true;
    app.use(httpMetricsMiddleware());
    app.use(router.routes());
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    closeApp = () => server.close();
  });
  after(async () => {
    closeMetrics?.();
    closeApp?.();
    await rpc?.shutdown(1_000);
  });

  /** What changed between two scrapes, for one series. */
  const delta = (
    before: MetricSample[],
    after: MetricSample[],
    name: string,
    labels: Record<string, string>,
  ) => sampleValue(after, name, labels) - sampleValue(before, name, labels);

  it("counts HTTP requests under the route template, never the path, and unrouted ones as unmatched", async () => {
    const before = await scrapeMetrics(metricsUrl);
    for (const id of ["run_1", "run_2", "run_3"])
      expect((await fetch(`${appUrl}/v1/runs/${id}`)).status).to.equal(200);
    expect((await fetch(`${appUrl}/nowhere/run_4`)).status).to.equal(404);
    expect((await fetch(`${appUrl}/boom`)).status).to.equal(500);
    const after = await scrapeMetrics(metricsUrl);

    const requests = "testrun_http_server_requests_total";
    expect(
      delta(before, after, requests, { route: "/v1/runs/:runId", method: "GET", status: "200" }),
    ).to.equal(3);
    expect(delta(before, after, requests, { route: "unmatched", method: "GET", status: "404" })).to.equal(1);
    expect(delta(before, after, requests, { route: "/boom", method: "GET", status: "500" })).to.equal(1);
    const routes = after.filter((s) => s.name === requests).map((s) => s.labels.route);
    expect(
      routes.filter((route) => route?.includes("run_")),
      "a series per id",
    ).to.deep.equal([]);
    expect(
      delta(before, after, "testrun_http_server_duration_seconds_count", {
        route: "/v1/runs/:runId",
        method: "GET",
      }),
    ).to.equal(3);
    const inf = after.find(
      (s) =>
        s.name === "testrun_http_server_duration_seconds_bucket" &&
        s.labels.route === "/v1/runs/:runId" &&
        s.labels.le === "+Inf",
    );
    expect(inf?.labels.component, "the default label").to.equal("kit-test");
  });

  it("counts RPCs by service, method and Connect code, refusals at the token gate included", async () => {
    const before = await scrapeMetrics(metricsUrl);
    const url = `http://127.0.0.1:${rpc.port}`;
    const catalog = serviceClient(CatalogService, url, { token: tokens.SERVICE_TOKEN });
    await catalog.checkAccess({ projectId: "prj_1" });
    await catalog.checkAccess({ projectId: "prj_1" });
    await catalog.checkAccess({ projectId: "prj_denied" }).catch(() => undefined);
    const stranger = serviceClient(CatalogService, url, { token: "x".repeat(40) });
    await stranger.checkAccess({ projectId: "prj_1" }).catch(() => undefined);
    const after = await scrapeMetrics(metricsUrl);

    const labels = { rpc_service: CatalogService.typeName, rpc_method: "CheckAccess" };
    const requests = "testrun_rpc_server_requests_total";
    expect(delta(before, after, requests, { ...labels, code: "ok" })).to.equal(2);
    expect(delta(before, after, requests, { ...labels, code: "permission_denied" })).to.equal(1);
    expect(delta(before, after, requests, { ...labels, code: "unauthenticated" })).to.equal(1);
    expect(delta(before, after, "testrun_rpc_server_duration_seconds_count", labels)).to.equal(4);
  });

  it("gives two modules declaring one metric the same one (the gateway's and the console's refusals in one process)", async () => {
    const first = counter<"reason">("testrun_kit_test_refusals_total", "refusals", ["reason"]);
    const second = counter<"reason">("testrun_kit_test_refusals_total", "refusals", ["reason"]);
    first.inc({ reason: "forbidden" });
    second.inc({ reason: "forbidden" });
    const samples = await scrapeMetrics(metricsUrl);
    expect(sampleValue(samples, "testrun_kit_test_refusals_total", { reason: "forbidden" })).to.equal(2);
    expect(() => gauge("testrun_kit_test_refusals_total", "not a gauge")).to.throw(/another type/);
  });

  it("serves Node's process metrics, and nothing but GET /metrics", async () => {
    const samples = await scrapeMetrics(metricsUrl);
    const names = new Set(samples.map((s) => s.name));
    for (const name of [
      "process_cpu_seconds_total",
      "nodejs_eventloop_lag_p99_seconds",
      "nodejs_heap_size_used_bytes",
    ])
      expect(names.has(name), name).to.equal(true);
    expect((await fetch(metricsUrl.replace("/metrics", "/other"))).status).to.equal(404);
    expect((await fetch(metricsUrl, { method: "POST" })).status).to.equal(405);
  });
});
