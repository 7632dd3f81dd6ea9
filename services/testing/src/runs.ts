import { createConnection, createServer, type Socket } from "node:net";
import type { Client } from "@connectrpc/connect";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { RunsService, type TestAssignment } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { decodeDispatch, newId, serviceClient, type TestKind, testStreams } from "@testrun/kit";
import { Redis } from "ioredis";
import pg from "pg";
import {
  apiKey,
  type CatalogHarness,
  type CatalogProcess,
  httpStep,
  operator,
  seedOrganization,
  startCatalogProcess,
  unique,
} from "./catalog.js";
import { createMigratedTestDatabase } from "./migrated.js";
import { type ServiceProcess, startServiceProcess } from "./process.js";
import { componentRedisUrl } from "./redis-users.js";
import { findFreePort } from "./servers.js";

export type Runs = Client<typeof RunsService>;
export type Billing = Client<typeof BillingService>;

function client<S extends typeof RunsService | typeof BillingService>(desc: S, url: string, token: string) {
  return serviceClient(desc, url, { token, timeoutMs: 30_000 });
}

/**
 * The whole chain the runs service needs: catalog, billing, runs. Each a real process
 * (`startRunsProcessStack`, here), or all three in the test's process (`startInProcessRunsStack` of
 * `@testrun/testing`); the helpers below take either.
 */
export interface RunsStack {
  catalog: CatalogHarness;
  /** The runs service's settings (tokens, DATABASE_URL; REDIS_URL the administrator's URL). */
  env: Record<string, string>;
  /** Runs client with the service token (gateway, CLI). */
  runs: Runs;
  /** Runs client with the executor token. */
  executor: Runs;
  billing: Billing;
  /**
   * The Redis database the runs service publishes to (its own database number, so FLUSHDB is ours
   * alone), as an administrator: the runs service itself connects as its own Redis user.
   */
  redis: Redis;
  /** The URL a component connects to that database with, as its own Redis user. */
  redisUrlOf(component: string): string;
  /** The runs service's database. */
  db: pg.Client;
  stop(): Promise<void>;
}

/** The stack as real processes, for what crosses them (sockets, signals, replicas, executors). */
export interface RunsProcessStack extends RunsStack {
  catalog: CatalogProcess;
  billingProcess: ServiceProcess;
  runsProcess: ServiceProcess;
}

/** Starts catalog, billing and runs as processes; `runsEnv` overrides the runs service's settings. */
export async function startRunsProcessStack(
  runsEnv: Record<string, string> = {},
  redisDb = 5,
): Promise<RunsProcessStack> {
  // The runs service's port, chosen first: the catalog tells it of deleted projects (RUNS_URL).
  const runsPort = await findFreePort();
  const catalog = await startCatalogProcess({ RUNS_URL: `http://127.0.0.1:${runsPort}` });
  // The catalog's database has the billing service's tables too (startCatalogProcess).
  const billingProcess = await startServiceProcess("billing", {
    ...catalog.env,
    CATALOG_URL: catalog.process.url,
  });
  const adminRedisUrl = new URL(String(process.env.REDIS_URL));
  adminRedisUrl.pathname = `/${redisDb}`;
  const redisUrlOf = (component: string) => componentRedisUrl(adminRedisUrl.toString(), component);
  const env: Record<string, string> = {
    ...catalog.env,
    DATABASE_URL: await createMigratedTestDatabase(["runs"]),
    // The administrator's URL of the database; the runs process connects as its own user.
    REDIS_URL: adminRedisUrl.toString(),
    CATALOG_URL: catalog.process.url,
    BILLING_URL: billingProcess.url,
    APP_URL: "https://app.testrun.example",
    ...runsEnv,
  };
  const redis = new Redis(env.REDIS_URL as string);
  await redis.flushdb();
  const runsProcess = await startServiceProcess("runs", {
    ...env,
    PORT: String(runsPort),
    REDIS_URL: redisUrlOf("runs"),
  });
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  return {
    catalog,
    billingProcess,
    runsProcess,
    env,
    runs: client(RunsService, runsProcess.url, catalog.env.SERVICE_TOKEN as string),
    executor: client(RunsService, runsProcess.url, catalog.env.EXECUTOR_TOKEN as string),
    billing: client(BillingService, billingProcess.url, catalog.env.SERVICE_TOKEN as string),
    redis,
    redisUrlOf,
    db,
    async stop() {
      if (process.env.DEBUG_RUNS)
        for (const l of runsProcess.output()) if (/crashed|error/.test(l)) console.log(l.slice(0, 1500));
      redis.disconnect();
      await db.end();
      await runsProcess.stop("SIGTERM");
      await billingProcess.stop("SIGKILL");
      await catalog.stop();
    },
  };
}

/** A project with an environment, three enabled cases (two tagged "smoke"), one disabled case and a plan. */
export async function seedRunsProject(stack: RunsStack, credits = 100n) {
  const { catalog } = stack.catalog;
  const seeded = await seedOrganization(catalog);
  const { projectId } = seeded;
  const actor = operator();
  const { environment } = await catalog.createEnvironment({
    actor,
    projectId,
    name: "staging",
    baseUrl: "https://staging.example.com",
    isDefault: true,
  });
  const testCase = async (name: string, tags: string[], enabled = true) =>
    (await catalog.createTestCase({ actor, projectId, name, tags, enabled, steps: [httpStep(`/${name}`)] }))
      .testCase?.id ?? "";
  const cases = [
    await testCase("login", ["smoke"]),
    await testCase("search", ["smoke"]),
    await testCase("checkout", ["slow"]),
  ];
  const disabled = await testCase("legacy", ["smoke"], false);
  const { testPlan } = await catalog.createTestPlan({
    actor,
    projectId,
    name: unique("nightly"),
    description: "",
    testCaseIds: cases,
  });
  if (credits > 0n)
    await stack.billing.grantCredits({
      actor,
      projectId,
      amount: credits,
      reason: "test grant",
      idempotencyKey: newId("run"),
    });
  return {
    ...seeded,
    environmentId: environment?.id ?? "",
    cases,
    disabled,
    planId: testPlan?.id ?? "",
    planName: testPlan?.name ?? "",
    key: apiKey(seeded.members.editor, projectId),
  };
}

export type RunsProject = Awaited<ReturnType<typeof seedRunsProject>>;

/**
 * Runs-service settings under which the reconciler acts within a second or so: leases lapse after 1 s,
 * a lost dispatch is published again after 300 ms, a start still pending after 300 ms is given up,
 * and a test is tried twice.
 */
export const quickReconciler = {
  // Short enough to watch leases lapse, long enough for a test's next call to land inside one on a
  // busy machine.
  LEASE_MS: "1000",
  MAX_ATTEMPTS: "2",
  RECONCILE_INTERVAL_MS: "100",
  REPUBLISH_AFTER_MS: "300",
  START_GRACE_MS: "300",
};

export const balanceOf = async (stack: RunsStack, projectId: string) =>
  (await stack.billing.getBalance({ actor: operator(), projectId })).balance;

/** Every dispatch on the executors' stream of one kind of test (HTTP-only ones by default), in order. */
export async function streamDispatches(redis: Redis, kind: TestKind = "http") {
  const entries = await redis.xrangeBuffer(testStreams[kind], "-", "+");
  return entries.map(([, fields]) => decodeDispatch(fields));
}

/** A browser step as the catalog stores steps: step.proto's JSON. */
export const storedBrowserStep = { name: "open the home page", browser: { goto: { url: "/" } } };

/**
 * A test case of one browser step in a project. Created with an HTTP step, then its stored steps
 * made the browser step directly in the catalog's table, so that what is tested here (the routing
 * of browser tests) does not depend on the catalog's validation of browser steps.
 */
export async function createBrowserTestCase(
  stack: RunsStack,
  projectId: string,
  name: string,
): Promise<string> {
  const { testCase } = await stack.catalog.catalog.createTestCase({
    actor: operator(),
    projectId,
    name,
    tags: [],
    enabled: true,
    steps: [httpStep("/")],
  });
  const id = testCase?.id ?? "";
  await stack.catalog.db.query("update catalog.test_cases set steps = $1::jsonb where id = $2", [
    JSON.stringify([storedBrowserStep]),
    id,
  ]);
  return id;
}

/** The lease of an assignment, as the executor's calls name it. */
export const leaseOf = (a: TestAssignment | undefined) => ({
  testResultId: a?.testResultId ?? "",
  leaseToken: a?.leaseToken ?? "",
});

/**
 * A TCP link to 127.0.0.1:`port` that holds everything sent through it until `release()`: a
 * network path on which a request is delayed without being lost.
 */
export async function heldLink(port: string | number) {
  const held: Socket[] = [];
  let released = false;
  const forward = (client: Socket) => {
    const upstream = createConnection({ host: "127.0.0.1", port: Number(port) });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream).pipe(client);
    client.resume();
  };
  const server = createServer({ pauseOnConnect: true }, (client) => {
    if (released) forward(client);
    else held.push(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    release() {
      released = true;
      for (const client of held.splice(0)) forward(client);
    },
    close() {
      server.close();
    },
  };
}

/**
 * A second runs replica whose link to billing holds every byte until `link.release()`: its charges
 * are on their way, neither lost nor arrived, for as long as a test needs. `client` calls it with
 * the service token and `timeoutMs` as its deadline.
 */
export async function replicaWithHeldBilling(stack: RunsProcessStack, timeoutMs: number) {
  const link = await heldLink(new URL(stack.billingProcess.url).port);
  const replica = await startServiceProcess("runs", { ...stack.env, BILLING_URL: link.url });
  return {
    link,
    client: serviceClient(RunsService, replica.url, { token: String(stack.env.SERVICE_TOKEN), timeoutMs }),
    async stop() {
      link.release();
      await replica.stop("SIGTERM");
      link.close();
    },
  };
}

/**
 * Runs `start` while reading a started run back fails: a trigger renames a column the read-back
 * selects as soon as the run is marked charged, so the start itself succeeds and only the read-back
 * fails, as a database failing at that moment would. The table is whole again afterwards.
 */
export async function withBrokenReadBack<T>(db: pg.Client, start: () => Promise<T>): Promise<T> {
  await db.query(`
    create function runs.break_read_back() returns trigger language plpgsql as $$
    begin
      alter table runs.test_results rename column summary to summary_hidden;
      return new;
    end $$;
    create trigger break_read_back after update of charge_state on runs.runs
      for each row when (new.charge_state = 'charged') execute function runs.break_read_back();`);
  try {
    return await start();
  } finally {
    await db.query(`
      drop trigger break_read_back on runs.runs;
      drop function runs.break_read_back();
      alter table runs.test_results rename column summary_hidden to summary;`);
  }
}
