import type { Client } from "@connectrpc/connect";
import { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { loadConfig, openDatabase } from "@testrun/kit";
import type { Resolve } from "@testrun/kit/egress";
import {
  capturedLogger,
  createMigratedTestDatabase,
  type InProcessRunsStack,
  inProcessRpc,
} from "@testrun/testing";

/** An automation service wired in the test's process, as main.ts wires it. */
export interface InProcessAutomation {
  /** Its database, which another replica (or a restarted one) may be given. */
  databaseUrl: string;
  /** A client with the service token, through the real server's gate and interceptors. */
  client: Client<typeof AutomationService>;
  /** Every line it logged so far. */
  lines(): string[];
  /** As main.ts's shutdown: the background loops, the webhook connections, then the database; once. */
  stop(): Promise<void>;
}

/**
 * The automation service in-process against `stack` (catalog and runs in-process too), with
 * `env` (WEBHOOK_SECRETS_KEY and the short intervals tests use) on top of the stack's tokens. Its
 * background loops (ticks, starts, following runs, deliveries) run as in production. A database
 * is given for a second replica or a restart; by default one is migrated afresh. `resolve` swaps
 * the resolver webhook hosts are looked up with; `catalog` the catalog it asks (one that does not
 * answer, say).
 */
export async function startAutomation(
  stack: InProcessRunsStack,
  env: Record<string, string>,
  databaseUrl?: string,
  resolve?: Resolve,
  catalog?: Client<typeof CatalogService>,
): Promise<InProcessAutomation> {
  // By import(), as @testrun/testing loads the runs service: the kit's copy of MikroORM.
  const { configSchema, database, wireAutomation } = await import("../src/wiring.js");
  const url = databaseUrl ?? (await createMigratedTestDatabase(["automation"]));
  const token = String(stack.env.SERVICE_TOKEN);
  const config = loadConfig(configSchema, { SERVICE_TOKEN: token, ...env, DATABASE_URL: url });
  const log = capturedLogger("automation", config.LOG_LEVEL);
  const orm = await openDatabase(url, database);
  const wiring = wireAutomation({
    config,
    orm,
    logger: log.logger,
    catalog: catalog ?? stack.rpc.client(CatalogService, token),
    runs: stack.rpc.client(RunsService, token),
    resolve,
  });
  // Its own router: replicas serve the same service, which one router cannot hold twice.
  const rpc = inProcessRpc({ tokens: { service: token }, logger: log.logger });
  rpc.serve(...wiring.services);
  let stopped: Promise<void> | undefined;
  return {
    databaseUrl: url,
    client: rpc.client(AutomationService, token),
    lines: log.lines,
    stop() {
      // Once: a test that restarts the service stops it before its after-each hook does.
      stopped ??= wiring.stop().then(() => orm.close());
      return stopped;
    },
  };
}
