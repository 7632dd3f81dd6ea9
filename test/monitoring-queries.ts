// The metric names the chart's PromQL uses (the Grafana dashboard's queries, the PrometheusRule's
// expressions, the ScaledObjects' queries) and the names the services promise to export (the
// contract of docs/operations.md, "Metrics"), so a query of a metric nobody exports fails a test.
// metricNamesInDashboard() and metricNamesInRules() also serve a check against a real scrape.
import { readFileSync } from "node:fs";
import { collectProcessMetrics } from "@testrun/kit";
import { repoRoot } from "@testrun/testing";
import client from "prom-client";

/** Testrun's own metrics (docs/operations.md, "Metrics"), each with its type. */
export const contractMetrics: Record<string, "counter" | "gauge" | "histogram"> = {
  testrun_rpc_server_requests_total: "counter",
  testrun_rpc_server_duration_seconds: "histogram",
  testrun_http_server_requests_total: "counter",
  testrun_http_server_duration_seconds: "histogram",
  testrun_runs_started_total: "counter",
  testrun_runs_finished_total: "counter",
  testrun_tests_claimed_total: "counter",
  testrun_tests_waiting: "gauge",
  testrun_tests_oldest_waiting_seconds: "gauge",
  testrun_runs_overdue: "gauge",
  testrun_queue_pending_entries: "gauge",
  testrun_queue_lag_entries: "gauge",
  testrun_lease_lapses_total: "counter",
  testrun_reconciler_repairs_total: "counter",
  testrun_watch_streams_open: "gauge",
  testrun_long_poll_waits_open: "gauge",
  testrun_refusals_total: "counter",
  testrun_credits_spent_total: "counter",
  testrun_credits_refunded_total: "counter",
  testrun_tests_executed_total: "counter",
  testrun_executor_slots: "gauge",
  testrun_browser_contexts_open: "gauge",
  testrun_executor_kind_available: "gauge",
};

/** The series names a metric of a type exposes: a histogram's _bucket, _sum and _count. */
export const seriesNames = (name: string, type: string) =>
  type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];

/** Node's process metrics as every component's collectProcessMetrics() names them. */
export async function defaultMetricSeries(): Promise<string[]> {
  const registry = new client.Registry();
  collectProcessMetrics(registry);
  const metrics = await registry.getMetricsAsJSON();
  return metrics.flatMap((metric) => seriesNames(metric.name, String(metric.type)));
}

/** Every series name a scrape of the services may hold, and Prometheus's own `up`. */
export async function knownSeries(): Promise<Set<string>> {
  return new Set([
    ...Object.entries(contractMetrics).flatMap(([name, type]) => seriesNames(name, type)),
    ...(await defaultMetricSeries()),
    "up",
  ]);
}

/** PromQL's words that are not metric names where an identifier stands alone. */
const keywords = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "by",
  "without",
  "on",
  "ignoring",
  "inf",
  "nan",
]);

/**
 * The metric names an expression selects: what remains once strings, label matchers, ranges, the
 * label lists of by/without/on/ignoring/group_*, function names (a word before "(") and numbers
 * are gone.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const match of stripped.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)) {
    const [, word, call] = match;
    if (!word || call || keywords.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names].sort();
}

interface DashboardPanel {
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}

/** Every query (expr) of a dashboard's panels, rows' panels included. */
export function dashboardQueries(dashboard: { panels?: DashboardPanel[] }): string[] {
  const panels = (dashboard.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  return panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr ?? ""));
}

/** The chart's dashboard (helm/testrun/dashboards/testrun.json) unless given another. */
export function metricNamesInDashboard(
  dashboard: { panels?: DashboardPanel[] } = JSON.parse(
    readFileSync(`${repoRoot}helm/testrun/dashboards/testrun.json`, "utf8"),
  ),
): string[] {
  return [...new Set(dashboardQueries(dashboard).flatMap(metricNamesIn))].sort();
}

/** The metric names of a PrometheusRule's groups (spec.groups, or a rule file's groups). */
export function metricNamesInRules(groups: { rules: { expr: string }[] }[]): string[] {
  return [
    ...new Set(groups.flatMap((group) => group.rules.flatMap((rule) => metricNamesIn(rule.expr)))),
  ].sort();
}
