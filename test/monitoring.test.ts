// The chart's monitoring and scaling objects (monitoring.*, autoscaling.keda in values.yaml): the
// ServiceMonitor, PodMonitor, PrometheusRule and ScaledObjects validated strictly against their CRDs
// (test/crds.ts), the rules checked and unit-tested by promtool (test/monitoring/rules.test.yaml),
// the dashboard as scripts/dashboard/testrun.ts generates it, and every metric the queries name one
// the services export (test/monitoring-queries.ts).
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { repoRoot } from "@testrun/testing";
import { expect } from "chai";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { IService } from "kubernetes-models/v1/Service";
import { parse, stringify } from "yaml";
import { buildDashboard, dashboardJson } from "../scripts/dashboard/testrun.js";
import { validateCustomResource } from "./crds.js";
import { renderChart, tryRenderChart } from "./helm.js";
import { type K8sObject, RenderedChart, selectorMatches } from "./kubernetes.js";
import {
  dashboardQueries,
  knownSeries,
  metricNamesInDashboard,
  metricNamesInRules,
} from "./monitoring-queries.js";

const run = promisify(execFile);
const chartPath = `${repoRoot}helm/testrun`;
const release = "ci";
const namespace = "testrun-ci";
const example = "examples/monitoring.yaml";
/** Grafana's syntax for the dashboard's datasource variable. */
const datasourceVariable = ["$", "{datasource}"].join("");
const crdKinds = ["ServiceMonitor", "PodMonitor", "PrometheusRule", "ScaledObject"];

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: Rule[];
}
type Custom = K8sObject & { spec: Record<string, unknown> };

const render = async (options: { valueFiles?: string[]; set?: string[] } = {}) =>
  new RenderedChart(await renderChart(chartPath, { release, namespace, ...options }), namespace);

const ofKind = (chart: RenderedChart, kind: string) =>
  chart.objects.filter((object) => object.kind === kind) as Custom[];

const ruleGroups = (chart: RenderedChart) => {
  const rules = ofKind(chart, "PrometheusRule");
  expect(rules, "PrometheusRules").to.have.lengthOf(1);
  return (rules[0]?.spec.groups ?? []) as RuleGroup[];
};

describe("chart monitoring and scaling (helm/testrun, monitoring.*, autoscaling.keda)", () => {
  let chart: RenderedChart;

  before(async function () {
    this.timeout(180_000); // the first go mod download of the CRDs' modules
    chart = await render({ valueFiles: [example] });
    // Fetches the CRDs now, so that the tests below time only themselves.
    for (const object of chart.objects.filter((candidate) => crdKinds.includes(candidate.kind)))
      await validateCustomResource(object);
  });

  it("renders none of it by default, and the executor keeps its CPU HPA switch", async () => {
    const plain = await render({ set: ["autoscaling.enabled=true"] });
    for (const kind of crdKinds) expect(ofKind(plain, kind), kind).to.be.empty;
    expect(plain.objects.filter((object) => object.metadata.name.endsWith("-dashboard"))).to.be.empty;
    const scaled = plain
      .ofKind<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler")
      .map((hpa) => hpa.spec?.scaleTargetRef.name);
    expect(scaled).to.include.members([`${release}-testrun-gateway`, `${release}-testrun-executor`]);
  });

  it(`renders every kind with ${example}, each valid against its CRD's schema`, async () => {
    for (const kind of crdKinds) expect(ofKind(chart, kind), kind).to.not.be.empty;
    const errors: string[] = [];
    for (const object of chart.objects.filter((candidate) => crdKinds.includes(candidate.kind)))
      await validateCustomResource(object).catch((error: Error) => errors.push(error.message));
    expect(errors.join("\n")).to.equal("");
  });

  it("refuses, against the CRDs, an unknown field, a wrong type and a missing required field", async () => {
    const [monitor] = ofKind(chart, "ServiceMonitor");
    const [scaled] = ofKind(chart, "ScaledObject");
    if (!monitor || !scaled) throw new Error("rendered no ServiceMonitor or ScaledObject");
    const variants: [string, Custom][] = [
      ["unknown field", { ...monitor, spec: { ...monitor.spec, endpoint: [] } }],
      ["wrong type", { ...scaled, spec: { ...scaled.spec, maxReplicaCount: "ten" } }],
      ["missing required", { ...scaled, spec: { ...scaled.spec, scaleTargetRef: undefined } }],
    ];
    for (const [what, object] of variants) {
      const variant = JSON.parse(JSON.stringify(object)) as K8sObject;
      const error = await validateCustomResource(variant).then(
        () => undefined,
        (failure: Error) => failure,
      );
      expect(error, what).to.be.instanceOf(Error);
    }
  });

  it("scrapes the request-serving components through their Services and every executor pod through the PodMonitor", () => {
    const [serviceMonitor] = ofKind(chart, "ServiceMonitor");
    const [podMonitor] = ofKind(chart, "PodMonitor");
    const selector = serviceMonitor?.spec.selector as Parameters<typeof selectorMatches>[0];
    const scraped = chart
      .ofKind<IService>("Service")
      .filter((service) => selectorMatches(selector, service.metadata?.labels))
      .map((service) => service.metadata?.labels?.["app.kubernetes.io/component"])
      .sort();
    expect(scraped).to.deep.equal(["automation", "billing", "catalog", "console", "gateway", "keys", "runs"]);
    const podSelector = podMonitor?.spec.selector as Parameters<typeof selectorMatches>[0];
    const executorPods = chart
      .workloads()
      .filter((workload) => selectorMatches(podSelector, workload.labels));
    expect(executorPods.map((workload) => workload.object.metadata.name).sort()).to.deep.equal([
      `${release}-testrun-executor-browser`,
      `${release}-testrun-executor-http`,
    ]);
  });

  it("scales each executor pool with KEDA on its own kind's work, never with an HPA too", () => {
    const hpaTargets = chart
      .ofKind<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler")
      .map((hpa) => hpa.spec?.scaleTargetRef.name);
    expect(hpaTargets, "CPU HPAs").to.include(`${release}-testrun-gateway`);
    const scaledObjects = ofKind(chart, "ScaledObject");
    const byTarget = new Map(
      scaledObjects.map((scaled) => [(scaled.spec.scaleTargetRef as { name: string }).name, scaled]),
    );
    // The browser pool takes the specs too (no pool lists them): it scales on both kinds' work.
    const expected = {
      http: { kind: "http", threshold: "8" },
      browser: { kind: "browser|spec", threshold: "2" },
    };
    for (const [pool, { kind, threshold }] of Object.entries(expected)) {
      const name = `${release}-testrun-executor-${pool}`;
      expect(hpaTargets, `${name} has no HPA`).to.not.include(name);
      const deployment = chart.objects.find(
        (object) => object.kind === "Deployment" && object.metadata.name === name,
      );
      expect(deployment, name).to.not.equal(undefined);
      expect((deployment?.spec as { replicas?: number } | undefined)?.replicas, `${name} replicas`).to.equal(
        undefined,
      );
      const triggers = byTarget.get(name)?.spec.triggers as
        | { type: string; metadata: Record<string, string> }[]
        | undefined;
      expect(triggers, `${name} ScaledObject`).to.have.lengthOf(1);
      const trigger = triggers?.[0];
      expect(trigger?.type).to.equal("prometheus");
      expect(trigger?.metadata.serverAddress).to.match(/^http:\/\/kube-prometheus-stack-prometheus/);
      expect(trigger?.metadata.query).to.include(`pool=~"${kind}"`).and.include(`executor_pool="${pool}"`);
      expect(trigger?.metadata.threshold, `${name} tests per replica`).to.equal(threshold);
    }
    expect(scaledObjects).to.have.lengthOf(2);
  });

  it("refuses KEDA without a Prometheus to ask", async () => {
    const result = await tryRenderChart(chartPath, {
      release,
      namespace,
      set: ["autoscaling.keda.enabled=true"],
    });
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.include("autoscaling.keda.serverAddress is required");
  });

  it("links every alert to its runbook section, which the docs have", () => {
    const rules = ruleGroups(chart).flatMap((group) => group.rules);
    expect(rules).to.have.lengthOf(10);
    const docs = readFileSync(`${repoRoot}docs/operations.md`, "utf8");
    for (const rule of rules) {
      expect(rule.annotations.runbook_url, rule.alert).to.equal(
        `https://github.com/testrun/testrun/blob/main/docs/operations.md#${rule.alert.toLowerCase()}`,
      );
      expect(docs, `a runbook heading for ${rule.alert}`).to.match(new RegExp(`^### ${rule.alert}$`, "m"));
    }
  });

  it("passes promtool check rules and the alerts' unit tests, each alert fired and kept quiet", async function () {
    this.timeout(60_000);
    const groups = ruleGroups(chart);
    const unitTests = parse(readFileSync(`${repoRoot}test/monitoring/rules.test.yaml`, "utf8")) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = unitTests.tests.flatMap((test) => test.alert_rule_test);
    for (const rule of groups.flatMap((group) => group.rules)) {
      const own = cases.filter((test) => test.alertname === rule.alert);
      expect(
        own.some((test) => test.exp_alerts.length > 0),
        `${rule.alert} fires`,
      ).to.equal(true);
      expect(
        own.some((test) => test.exp_alerts.length === 0),
        `${rule.alert} stays quiet`,
      ).to.equal(true);
    }
    const dir = mkdtempSync(`${tmpdir()}/testrun-rules-`);
    try {
      writeFileSync(`${dir}/rules.yaml`, stringify({ groups }));
      copyFileSync(`${repoRoot}test/monitoring/rules.test.yaml`, `${dir}/rules.test.yaml`);
      for (const args of [
        ["check", "rules", "rules.yaml"],
        ["test", "rules", "rules.test.yaml"],
      ]) {
        const result = await run("promtool", args, { cwd: dir }).catch(
          (error: Error & { stdout?: string; stderr?: string }) => {
            if ((error as { code?: unknown }).code === "ENOENT")
              throw new Error(
                "promtool is missing: run scripts/install-prerequisites.sh (Debian's prometheus)",
              );
            throw new Error(`promtool ${args.join(" ")} failed:\n${error.stdout}${error.stderr}`);
          },
        );
        expect(result.stdout).to.include("SUCCESS");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ships the dashboard the script generates, in a ConfigMap with the sidecar's label", async () => {
    const committed = readFileSync(`${repoRoot}helm/testrun/dashboards/testrun.json`, "utf8");
    expect(committed === dashboardJson(), "dashboards/testrun.json is stale: run `make dashboard`").to.equal(
      true,
    );
    const moved = await render({
      valueFiles: [example],
      set: ["monitoring.dashboard.namespace=grafana", "monitoring.dashboard.labelKey=dashboards"],
    });
    const map = moved.objects.find(
      (object) => object.metadata.name === `${release}-testrun-dashboard`,
    ) as IConfigMap;
    expect(map.metadata?.namespace).to.equal("grafana");
    expect(map.metadata?.labels?.dashboards).to.equal("1");
    expect(JSON.parse(map.data?.["testrun.json"] ?? "")).to.deep.equal(JSON.parse(committed));
  });

  it("builds a dashboard whose panels all query Prometheus and fit the grid", () => {
    const dashboard = buildDashboard() as {
      uid: string;
      panels: {
        id: number;
        type: string;
        datasource?: { type: string; uid: string };
        gridPos: { x: number; y: number; w: number; h: number };
        targets?: { expr?: string; refId?: string }[];
      }[];
    };
    expect(dashboard.uid).to.be.a("string").that.is.not.empty;
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size, "unique panel ids").to.equal(ids.length);
    for (const panel of dashboard.panels) {
      const { x, w, h } = panel.gridPos;
      expect(x >= 0 && w > 0 && h > 0 && x + w <= 24, `panel ${panel.id} within 24 columns`).to.equal(true);
      if (panel.type === "row") continue;
      expect(panel.datasource, `panel ${panel.id} datasource`).to.deep.equal({
        type: "prometheus",
        uid: datasourceVariable,
      });
      expect(panel.targets, `panel ${panel.id} targets`).to.not.be.empty;
      const refIds = (panel.targets ?? []).map((target) => target.refId);
      expect(new Set(refIds).size, `panel ${panel.id} refIds`).to.equal(refIds.length);
      for (const target of panel.targets ?? [])
        expect(target.expr, `panel ${panel.id} expr`).to.be.a("string").that.is.not.empty;
    }
    expect(dashboardQueries(dashboard).length).to.be.greaterThan(20);
  });

  it("queries only metrics the services export, in the dashboard, the rules and the ScaledObjects", async () => {
    const known = await knownSeries();
    const keda = ofKind(chart, "ScaledObject").flatMap((scaled) =>
      (scaled.spec.triggers as { metadata: { query: string } }[]).map((trigger) => ({
        expr: trigger.metadata.query,
      })),
    );
    const used = {
      dashboard: metricNamesInDashboard(),
      rules: metricNamesInRules(ruleGroups(chart)),
      scaledObjects: metricNamesInRules([{ rules: keda }]),
    };
    for (const [where, names] of Object.entries(used)) {
      expect(names, where).to.not.be.empty;
      expect(
        names.filter((name) => !known.has(name)),
        `${where}: metrics nobody exports`,
      ).to.deep.equal([]);
    }
    // The extraction itself: a misspelt metric is caught.
    expect(
      metricNamesInRules([{ rules: [{ expr: 'sum by (pool) (rate(testrun_test_waiting{a="b"}[5m]))' }] }]),
    ).to.deep.equal(["testrun_test_waiting"]);
  });
});
