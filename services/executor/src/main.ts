import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { runService, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { kindHealth, takesTestsHealth } from "./kinds.js";
import { registerExecutorGauges } from "./metrics.js";
import { wireExecutor } from "./wiring.js";

await runService({
  name: "executor",
  config: configSchema,
  redis: true,
  setup: async ({ config, logger, redis, onStopping, setHealth }) => {
    const executor = await wireExecutor({
      config,
      redis,
      logger,
      runs: serviceClient(RunsService, config.RUNS_URL, { token: config.EXECUTOR_TOKEN }),
      catalog: serviceClient(CatalogService, config.CATALOG_URL, { token: config.EXECUTOR_TOKEN }),
      // A consumer per process (not per pod name): after a restart, what the previous process left
      // unacknowledged is taken over like any dead executor's work.
      name: `${config.EXECUTOR_NAME}-${process.pid}`,
    });
    // The process's own gauges (one Prometheus registry), so registered here, not in the wiring
    // that tests build more than once.
    const { kinds } = executor;
    registerExecutorGauges({
      slots: () => executor.executor.slots,
      contexts: () => executor.browsers.open,
      kinds: () => kinds.configured.map((kind) => ({ kind, taken: kinds.takes(kind) })),
    });
    // Readiness: whether it takes any test now, and which kinds (an HTTP pool is ready at once, a
    // browser pool once its browser launched; one whose browser does not start is not ready).
    const report = () => {
      for (const kind of kinds.configured) setHealth(kindHealth(kind), kinds.takes(kind));
      setHealth(takesTestsHealth, kinds.taken.length > 0);
    };
    kinds.onChange(report);
    report();
    // No new tests from SIGTERM on, drain or not; those in flight get SHUTDOWN_TIMEOUT_MS.
    onStopping(() => executor.stop());
    return executor.services;
  },
});
