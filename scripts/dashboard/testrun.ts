// The Grafana dashboard the chart ships (helm/testrun/dashboards/testrun.json, in the ConfigMap of
// monitoring.dashboard), built with the Grafana foundation SDK rather than edited by hand in Grafana.
// Its queries use only the metrics of docs/operations.md, "Metrics" (test/monitoring.test.ts checks
// that, and that the committed JSON is what this script writes).
//   node --import tsx scripts/dashboard/testrun.ts   (or `make dashboard`) rewrites the JSON.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as bargauge from "@grafana/grafana-foundation-sdk/bargauge";
import type * as cog from "@grafana/grafana-foundation-sdk/cog";
import * as common from "@grafana/grafana-foundation-sdk/common";
import {
  DashboardBuilder,
  DatasourceVariableBuilder,
  type Panel,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  VariableSort,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { DataqueryBuilder } from "@grafana/grafana-foundation-sdk/prometheus";
import * as stat from "@grafana/grafana-foundation-sdk/stat";
import * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import { services } from "../services.js";

export const dashboardPath = fileURLToPath(
  new URL("../../helm/testrun/dashboards/testrun.json", import.meta.url),
);

/** Every panel queries the Prometheus the datasource variable picks. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template literal.
const datasource = { type: "prometheus", uid: "${datasource}" };
/** This release's series: its namespace (one Testrun per namespace, docs/operations.md). */
const ns = 'namespace="$namespace"';
/** The scrape jobs of Testrun's components: <fullname>-<component> (the chart's monitors). */
const jobs = `job=~".+-(${services.map((service) => service.name).join("|")})"`;

const query = (expr: string, legend: string) =>
  new DataqueryBuilder().expr(expr).legendFormat(legend).range().datasource(datasource);

type PanelBuilder = cog.Builder<Panel> & {
  id(id: number): unknown;
  datasource(datasource: common.DataSourceRef): unknown;
};

/** A time series panel: title, description, unit, width (of 24) and its queries. */
function graph(
  title: string,
  description: string,
  unit: string,
  span: number,
  queries: DataqueryBuilder[],
): timeseries.PanelBuilder {
  const panel = new timeseries.PanelBuilder()
    .title(title)
    .description(description)
    .unit(unit)
    .min(0)
    .span(span)
    .height(8)
    .fillOpacity(10)
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.List)
        .placement(common.LegendPlacement.Bottom),
    );
  queries.forEach((target, index) => {
    panel.withTarget(target.refId(String.fromCharCode(65 + index)));
  });
  return panel;
}

export function buildDashboard(): object {
  let nextId = 1;
  const numbered = <T extends PanelBuilder>(panel: T): T => {
    panel.id(nextId++);
    panel.datasource(datasource);
    return panel;
  };
  const rate = (metric: string, selector = "") =>
    `rate(${metric}{${ns}${selector ? `,${selector}` : ""}}[$__rate_interval])`;

  const builder = new DashboardBuilder("Testrun")
    .uid("testrun-overview")
    .description("Testrun's traffic, queue, executors, runs, refusals and processes (docs/operations.md).")
    .tags(["testrun"])
    .refresh("30s")
    .time({ from: "now-3h", to: "now" })
    .timezone("browser")
    .withVariable(new DatasourceVariableBuilder("datasource").label("Prometheus").type("prometheus"))
    .withVariable(
      new QueryVariableBuilder("namespace")
        .label("Namespace")
        .datasource(datasource)
        .query("label_values(testrun_runs_started_total, namespace)")
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc),
    );

  builder.withRow(new RowBuilder("Traffic and errors").id(nextId++));
  builder
    .withPanel(
      numbered(
        graph(
          "Requests by route",
          "HTTP requests a second of the gateway and the console, by route template.",
          "reqps",
          12,
          [
            query(
              `sum by (component, method, route) (${rate("testrun_http_server_requests_total")})`,
              "{{component}} {{method}} {{route}}",
            ),
          ],
        ),
      ),
    )
    .withPanel(
      numbered(
        graph("Errors by route", "4xx and 5xx answers a second, by route template and status.", "reqps", 12, [
          query(
            `sum by (component, method, route, status) (${rate("testrun_http_server_requests_total", 'status=~"[45].."')})`,
            "{{status}} {{method}} {{route}}",
          ),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Start latency (POST /v1/runs)",
          "How long starting a run takes at the gateway: quantiles of its duration.",
          "s",
          8,
          [
            ...[0.5, 0.95, 0.99].map((quantile) =>
              query(
                `histogram_quantile(${quantile}, sum by (le) (${rate("testrun_http_server_duration_seconds_bucket", 'method="POST",route="/v1/runs"')}))`,
                `p${quantile * 100}`,
              ),
            ),
          ],
        ),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Request duration p95 by route",
          "95th percentile of HTTP request duration, by route template.",
          "s",
          8,
          [
            query(
              `histogram_quantile(0.95, sum by (le, method, route) (${rate("testrun_http_server_duration_seconds_bucket")}))`,
              "{{method}} {{route}}",
            ),
          ],
        ),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "RPC errors by method",
          "RPCs a second that ended with a code other than ok, by service, method and code.",
          "reqps",
          8,
          [
            query(
              `sum by (component, rpc_service, rpc_method, code) (${rate("testrun_rpc_server_requests_total", 'code!="ok"')})`,
              "{{rpc_method}} {{code}}",
            ),
          ],
        ),
      ),
    );

  builder.withRow(new RowBuilder("Queue").id(nextId++));
  builder
    .withPanel(
      numbered(
        graph(
          "Tests waiting by pool",
          "Tests dispatched and not claimed yet (PostgreSQL), by pool (http, browser, spec).",
          "short",
          8,
          [query(`max by (pool) (testrun_tests_waiting{${ns}})`, "{{pool}}")],
        ),
      ),
    )
    .withPanel(
      numbered(
        graph("Oldest waiting test by pool", "Age of the oldest test waiting for an executor.", "s", 8, [
          query(`max by (pool) (testrun_tests_oldest_waiting_seconds{${ns}})`, "{{pool}}"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Stream entries by pool",
          "The Redis stream's entries not yet delivered (lag) and delivered but not acknowledged (pending).",
          "short",
          8,
          [
            query(`max by (pool) (testrun_queue_lag_entries{${ns}})`, "lag {{pool}}"),
            query(`max by (pool) (testrun_queue_pending_entries{${ns}})`, "pending {{pool}}"),
          ],
        ),
      ),
    );

  builder.withRow(new RowBuilder("Executors").id(nextId++));
  builder
    .withPanel(
      numbered(
        graph(
          "Slots by executor pool",
          "Executor test slots busy and free (executor_pool: the chart's pool; empty without pools).",
          "short",
          8,
          [
            query(
              `sum by (executor_pool, state) (testrun_executor_slots{${ns}})`,
              "{{executor_pool}} {{state}}",
            ),
          ],
        ),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Saturation by executor pool",
          "Share of slots busy: near 100% with tests waiting means too few executors.",
          "percentunit",
          8,
          [
            query(
              `sum by (executor_pool) (testrun_executor_slots{${ns},state="busy"}) / sum by (executor_pool) (testrun_executor_slots{${ns}})`,
              "{{executor_pool}}",
            ),
          ],
        ).max(1),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Browser contexts open",
          "Browser contexts open in executors that take browser tests.",
          "short",
          8,
          [query(`sum by (executor_pool) (testrun_browser_contexts_open{${ns}})`, "{{executor_pool}}")],
        ),
      ),
    )
    .withPanel(
      numbered(
        graph("Tests claimed by pool", "Tests claimed a second by executors, by pool.", "ops", 12, [
          query(`sum by (pool) (${rate("testrun_tests_claimed_total")})`, "{{pool}}"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Tests executed by status",
          "Tests executed to a result a second, by status and step kind.",
          "ops",
          12,
          [
            query(
              `sum by (status, step_kind) (${rate("testrun_tests_executed_total")})`,
              "{{status}} {{step_kind}}",
            ),
          ],
        ),
      ),
    );

  builder.withRow(new RowBuilder("Runs").id(nextId++));
  builder
    .withPanel(
      numbered(
        graph("Run outcomes", "Runs started and finished a second, by final status.", "ops", 12, [
          query(`sum(${rate("testrun_runs_started_total")})`, "started"),
          query(`sum by (status) (${rate("testrun_runs_finished_total")})`, "{{status}}"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        new stat.PanelBuilder()
          .title("Runs overdue")
          .description("Runs not finished past their deadline.")
          .unit("short")
          .span(4)
          .height(8)
          .graphMode(common.BigValueGraphMode.Area)
          .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]))
          .withTarget(query(`max(testrun_runs_overdue{${ns}})`, "overdue").refId("A")),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Repairs and lapses",
          "Reconciler repairs by kind and claims whose lease lapsed, a second.",
          "ops",
          8,
          [
            query(`sum by (kind) (${rate("testrun_reconciler_repairs_total")})`, "{{kind}}"),
            query(`sum(${rate("testrun_lease_lapses_total")})`, "lease lapses"),
          ],
        ),
      ),
    )
    .withPanel(
      numbered(
        graph("Watches and waits open", "WatchRun streams and wait= long-polls open.", "short", 12, [
          query(`sum by (component) (testrun_watch_streams_open{${ns}})`, "watch streams {{component}}"),
          query(`sum(testrun_long_poll_waits_open{${ns}})`, "long-poll waits"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph("Credits", "Credits spent and refunded a second.", "short", 12, [
          query(`sum(${rate("testrun_credits_spent_total")})`, "spent"),
          query(`sum(${rate("testrun_credits_refunded_total")})`, "refunded"),
        ]),
      ),
    );

  builder.withRow(new RowBuilder("Refusals").id(nextId++));
  builder
    .withPanel(
      numbered(
        new bargauge.PanelBuilder()
          .title("Top refusals by reason")
          .description(
            "Refused requests over the dashboard's time range, by reason (401, 402, 403, 413, 429 …).",
          )
          .unit("short")
          .span(8)
          .height(8)
          .orientation(common.VizOrientation.Horizontal)
          .displayMode(common.BarGaugeDisplayMode.Gradient)
          .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]))
          .withTarget(
            new DataqueryBuilder()
              .expr(`topk(10, sum by (reason) (increase(testrun_refusals_total{${ns}}[$__range])))`)
              .legendFormat("{{reason}}")
              .instant()
              .refId("A")
              .datasource(datasource),
          ),
      ),
    )
    .withPanel(
      numbered(
        graph("Refusals by reason", "Refused requests a second, by reason and component.", "reqps", 16, [
          query(`sum by (component, reason) (${rate("testrun_refusals_total")})`, "{{component}} {{reason}}"),
        ]),
      ),
    );

  builder.withRow(new RowBuilder("Process health").id(nextId++));
  builder
    .withPanel(
      numbered(
        graph("Targets up", "Scraped pods answering, by job (0: a component down).", "short", 8, [
          query(`sum by (job) (up{${ns},${jobs}})`, "{{job}}"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph("CPU by pod", "CPU seconds a second of each pod's process.", "percentunit", 8, [
          query(`sum by (component, pod) (${rate("process_cpu_seconds_total")})`, "{{pod}}"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph("Memory by pod", "Resident memory and V8 heap used of each pod's process.", "bytes", 8, [
          query(`max by (component, pod) (process_resident_memory_bytes{${ns}})`, "rss {{pod}}"),
          query(`sum by (component, pod) (nodejs_heap_size_used_bytes{${ns}})`, "heap {{pod}}"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph("Event-loop delay p99", "The event loop's delay at the 99th percentile, per pod.", "s", 12, [
          query(`max by (component, pod) (nodejs_eventloop_lag_p99_seconds{${ns}})`, "{{pod}}"),
        ]),
      ),
    )
    .withPanel(
      numbered(
        graph(
          "Garbage collection",
          "Seconds a second spent in garbage collection, per pod.",
          "percentunit",
          12,
          [query(`sum by (component, pod) (${rate("nodejs_gc_duration_seconds_sum")})`, "{{pod}}")],
        ),
      ),
    );

  return builder.build();
}

/** The dashboard as the chart keeps it. */
export const dashboardJson = () => `${JSON.stringify(buildDashboard(), null, 2)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(dashboardPath, dashboardJson());
  console.log(`wrote ${dashboardPath}`);
}
