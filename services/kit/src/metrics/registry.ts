import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's one metrics registry (docs/operations.md, "Metrics"): every component is its own
 * process, so one registry per process is one per component. Its series carry `component`.
 */
export const metricsRegistry = new Registry();

/** Seconds; the same buckets for every duration histogram, so dashboards can compare them. */
export const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let started: string | undefined;
let recording = true;

/** Whether the RED metrics are recorded: off in a process that serves no /metrics (METRICS_PORT=0). */
export const recordingMetrics = (): boolean => recording;

/**
 * A process that serves no /metrics records no RED metrics and starts no process metrics: nobody
 * could read them, and `make bench` measures the instrumentation's cost against this (docs/
 * development.md). The domain's few counters still count (one increment per run or test event).
 */
export function turnMetricsOff(): void {
  recording = false;
}

/**
 * Labels every series with the component's name and starts Node's process metrics (CPU, memory,
 * event-loop lag, GC). Once per process; a second call with another name is a mistake.
 */
export function initMetrics(component: string): void {
  if (started === component) return;
  if (started !== undefined) throw new Error(`metrics already started for ${started}, not ${component}`);
  started = component;
  metricsRegistry.setDefaultLabels({ component });
  collectProcessMetrics(metricsRegistry);
}

/**
 * prom-client's gauges of all a process's handles, requests and resources, named like counters:
 * `promtool check metrics` refuses them, and each is the sum of its by-type twin
 * (`sum without (type) (nodejs_active_handles)`), which stays.
 */
const droppedDefaultMetrics = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/** Node's process metrics (prom-client's defaults but `droppedDefaultMetrics`) in `registry`. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of droppedDefaultMetrics) registry.removeSingleMetric(name);
}

/**
 * The metric of that name already in the registry, or a new one. Two modules may declare the same
 * metric (the gateway's and the console's refusals), and both are loaded in one process when the
 * tests import both; prom-client would refuse the second registration.
 */
function existingOr<M>(name: string, make: () => M, kind: new (...args: never[]) => M): M {
  const existing = metricsRegistry.getSingleMetric(name);
  if (existing === undefined) return make();
  if (!(existing instanceof kind)) throw new Error(`metric ${name} is already registered with another type`);
  return existing;
}

/** A counter in the process's registry. Label values must be bounded (never ids, keys or names). */
export const counter = <L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
) =>
  existingOr(
    name,
    () => new Counter<L>({ name, help, labelNames, registers: [metricsRegistry] }),
    Counter<L>,
  );

/** A gauge in the process's registry; `collect` runs at scrape time. */
export const gauge = <L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  collect?: (this: Gauge<L>) => void | Promise<void>,
) =>
  existingOr(
    name,
    () => new Gauge<L>({ name, help, labelNames, registers: [metricsRegistry], ...(collect && { collect }) }),
    Gauge<L>,
  );

/** A duration histogram (seconds, `durationBuckets`) in the process's registry. */
export const durationHistogram = <L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
) =>
  existingOr(
    name,
    () =>
      new Histogram<L>({ name, help, labelNames, buckets: durationBuckets, registers: [metricsRegistry] }),
    Histogram<L>,
  );

/**
 * A reading for gauges taken at scrape time from a database or Redis, shared for `ttlMs`: scrapes
 * by several Prometheus servers (or a burst of them) cost one query, and concurrent scrapes wait
 * for the same one. A failed reading leaves the last values in place (`onError` says why).
 */
export function cachedReading(read: () => Promise<void>, ttlMs: number, onError: (err: unknown) => void) {
  let at = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;
  return (): Promise<void> => {
    if (performance.now() - at < ttlMs) return Promise.resolve();
    inFlight ??= read()
      .catch(onError)
      .finally(() => {
        at = performance.now();
        inFlight = undefined;
      });
    return inFlight;
  };
}
