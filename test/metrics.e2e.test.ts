// The metrics as an operator's Prometheus sees them: a real Prometheus scrapes every component of
// the whole system while runs pass, fail and are refused; its HTTP API must then give the counts
// and histograms the dashboard and the alerts are built on (docs/operations.md, "Metrics").

import { repoRoot } from "@testrun/testing";
import { expect } from "chai";
import { seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { renderChart } from "./helm.js";
import { RenderedChart } from "./kubernetes.js";
import {
  declaredMetricSeries,
  exportedMetricNames,
  type PromSeries,
  promtoolCheckMetrics,
  startPrometheus,
  type ThrowawayPrometheus,
} from "./metrics.js";
import { metricNamesInDashboard, metricNamesInRules } from "./monitoring-queries.js";
import { addCases, getCase, newProject, Pipeline, type RunBody, startTestSystem } from "./pipeline.js";

/** The value of the one series of a result, 0 when there is none. */
const only = (series: PromSeries[]) => series[0]?.value ?? 0;
const equals = (expected: number) => (series: PromSeries[]) => only(series) === expected;

describe("metrics scraped by a real Prometheus", () => {
  let system: System;
  let prometheus: ThrowawayPrometheus;
  let passed: RunBody;
  let failed: RunBody;

  before(async function () {
    this.timeout(120_000);
    system = await startTestSystem();
    prometheus = await startPrometheus(system);
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    const pipeline = new Pipeline(system.gatewayUrl, demo.secret);
    // A run that passes and one that fails, driven to their end as a pipeline does (polling).
    passed = await pipeline.finished((await pipeline.start({ testPlan: "smoke" })).id);
    failed = await pipeline.finished((await pipeline.start({ tags: ["regression"] })).id);
    expect([passed.status, failed.status]).to.deep.equal(["PASSED", "FAILED"]);
    // Refused: a project without credits (402), and a key that does not exist (401).
    const broke = await newProject(system, "metrics broke", { credits: 0 });
    await addCases(system, broke.projectId, getCase("health", "health", "/health"));
    expect((await broke.pipeline.call("POST", "/v1/runs", { tags: ["health"] })).status).to.equal(402);
    const stranger = new Pipeline(system.gatewayUrl, `trk_${"x".repeat(40)}`);
    expect((await stranger.call("GET", "/v1/runs")).status).to.equal(401);
  });
  after(async () => {
    await prometheus?.stop();
    await system?.stop();
  });

  it("scrapes every component, each series labelled with its component", async () => {
    await prometheus.until('sum(up{job="testrun"})', equals(system.metricsUrls.size), "every target up");
    const components = await prometheus.query(
      'count by (component) (process_start_time_seconds{job="testrun"})',
    );
    expect(components.map((series) => series.metric.component).sort()).to.deep.equal(
      [...system.metricsUrls.keys()].sort(),
    );
  });

  it("counts runs started and finished by status", async () => {
    await prometheus.until(
      'sum(testrun_runs_started_total{component="runs"})',
      equals(2),
      "two runs started",
    );
    await prometheus.until('sum(testrun_runs_finished_total{status="passed"})', equals(1), "one run passed");
    await prometheus.until('sum(testrun_runs_finished_total{status="failed"})', equals(1), "one run failed");
  });

  it("counts the tests executed by status and step kind, claimed, and the credits they cost", async () => {
    const passedTests = passed.passedTests + failed.passedTests;
    const failedTests = passed.failedTests + failed.failedTests;
    const total = passed.tests.length + failed.tests.length;
    await prometheus.until(
      'sum(testrun_tests_executed_total{status="passed",step_kind="http"})',
      equals(passedTests),
      "the passed tests executed",
    );
    await prometheus.until(
      'sum(testrun_tests_executed_total{status="failed",step_kind="http"})',
      equals(failedTests),
      "the failed tests executed",
    );
    await prometheus.until(
      'sum(testrun_tests_claimed_total{pool="http"})',
      equals(total),
      "the tests claimed",
    );
    await prometheus.until("sum(testrun_credits_spent_total)", equals(total), "the credits spent");
    // Nothing waits once both runs finished.
    await prometheus.until("sum(testrun_tests_waiting)", equals(0), "no test waiting");
    expect(only(await prometheus.query('max(testrun_tests_oldest_waiting_seconds{pool="http"})'))).to.equal(
      0,
    );
    expect(only(await prometheus.query('sum(testrun_executor_slots{state="free"})'))).to.be.above(0);
  });

  it("counts refusals by reason at the gateway, and the refused start's RPC code", async () => {
    await prometheus.until(
      'sum(testrun_refusals_total{component="gateway",reason="payment_required"})',
      equals(1),
      "one 402",
    );
    await prometheus.until(
      'sum(testrun_refusals_total{component="gateway",reason="unauthenticated"})',
      equals(1),
      "one 401",
    );
    await prometheus.until(
      'sum(testrun_rpc_server_requests_total{component="runs",rpc_service="testrun.runs.v1.RunsService",rpc_method="StartRun",code="ok"})',
      equals(2),
      "two StartRun calls ok",
    );
    await prometheus.until(
      'sum(testrun_rpc_server_requests_total{component="runs",rpc_method="StartRun",code="failed_precondition"})',
      equals(1),
      "the StartRun refused for credits",
    );
  });

  it("keeps HTTP series per route template, with the duration histogram's buckets", async () => {
    await prometheus.until(
      'sum(testrun_http_server_requests_total{component="gateway",route="/v1/runs",method="POST",status="201"})',
      equals(2),
      "two starts answered 201",
    );
    await prometheus.until(
      'sum(testrun_http_server_requests_total{component="gateway",route="/v1/runs",method="POST",status="402"})',
      equals(1),
      "the start answered 402",
    );
    const buckets = await prometheus.until(
      'testrun_http_server_duration_seconds_bucket{component="gateway",route="/v1/runs/:id",method="GET"}',
      (series) => series.length === 13,
      "the GET /v1/runs/:id histogram",
    );
    const count = only(
      await prometheus.query(
        'sum(testrun_http_server_duration_seconds_count{component="gateway",route="/v1/runs/:id",method="GET"})',
      ),
    );
    expect(buckets.find((series) => series.metric.le === "+Inf")?.value)
      .to.equal(count)
      .and.to.be.above(1);
    expect(buckets.map((series) => series.metric.le)).to.include.members(["0.005", "0.1", "1", "30", "+Inf"]);
    // No series names a run: route templates only.
    const routes = await prometheus.query(
      'count by (route) (testrun_http_server_requests_total{component="gateway"})',
    );
    expect(
      routes.map((series) => series.metric.route).filter((route) => route?.includes("run_")),
    ).to.deep.equal([]);
  });

  it("exports the names the helper reports, Node's process metrics included", async () => {
    const names = await exportedMetricNames(system);
    for (const name of [
      "testrun_rpc_server_requests_total",
      "testrun_http_server_duration_seconds_bucket",
      "testrun_runs_finished_total",
      "testrun_tests_waiting",
      "testrun_queue_pending_entries",
      "testrun_queue_lag_entries",
      "testrun_watch_streams_open",
      "testrun_long_poll_waits_open",
      "testrun_browser_contexts_open",
      "nodejs_eventloop_lag_p99_seconds",
      "nodejs_active_handles",
      "nodejs_gc_duration_seconds_bucket",
    ])
      expect(names.has(name), name).to.equal(true);
  });

  it("passes promtool check metrics at every component", async () => {
    const complaints: string[] = [];
    for (const [component, url] of system.metricsUrls) {
      const { code, output } = await promtoolCheckMetrics(await (await fetch(url)).text());
      if (code !== 0 || output !== "") complaints.push(`${component} (exit ${code}):\n${output}`);
    }
    expect(complaints, complaints.join("\n")).to.deep.equal([]);
  });

  it("declares every metric the chart's dashboard, alert rules and ScaledObjects query", async function () {
    this.timeout(60_000);
    const namespace = "testrun-ci";
    const chart = new RenderedChart(
      await renderChart(`${repoRoot}helm/testrun`, {
        release: "ci",
        namespace,
        valueFiles: ["examples/monitoring.yaml"],
      }),
      namespace,
    );
    const specs = (kind: string) =>
      chart.objects
        .filter((object) => object.kind === kind)
        .map((object) => (object as unknown as { spec: Record<string, unknown> }).spec);
    const ruleGroups = specs("PrometheusRule").flatMap(
      (spec) => spec.groups as { rules: { expr: string }[] }[],
    );
    const kedaQueries = specs("ScaledObject").flatMap((spec) =>
      (spec.triggers as { metadata: { query: string } }[]).map((trigger) => ({
        expr: trigger.metadata.query,
      })),
    );
    const used = new Set([
      ...metricNamesInDashboard(),
      ...metricNamesInRules(ruleGroups),
      ...metricNamesInRules([{ rules: kedaQueries }]),
    ]);
    expect(used.size, "metrics the chart queries").to.be.greaterThan(20);
    // `up` is Prometheus' own, written for every target it scrapes.
    const declared = new Set([...(await declaredMetricSeries(system)), "up"]);
    expect(
      [...used].filter((name) => !declared.has(name)).sort(),
      "queried, exported by no component",
    ).to.deep.equal([]);
  });
});
