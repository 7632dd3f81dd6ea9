// The automation table of `make bench` (BENCH_ONLY=automation runs it alone; docs/automation.md,
// docs/development.md "Benchmarks"), on a system of its own. The system's own automation process is
// stopped and replicas are started here, from the built code, with short retry delays
// (AUTOMATION_RETRY_DELAYS_MS) and a short attempt timeout (AUTOMATION_TIMEOUT_MS), so that the
// reliability part ends in a minute rather than hours. Receivers are scripts/webhook-receiver.ts,
// which checks every signature with the `standardwebhooks` package.
//
// 1. Latency: one webhook (EVERY_RUN, run.finished) on a project; BENCH_AUTOMATION_RUNS one-test
//    runs started a few a second through the gateway; per event, the receiver's arrival minus the
//    run's finishedAt (both this machine's clock): p50, p99.
//    Deliveries per second per replica: the replicas stopped, BENCH_AUTOMATION_DRAIN runs finished
//    meanwhile, then 1 (and then 2) replicas started: the backlog's deliveries over the time from
//    the first replica listening to the last arrival (following the runs, enqueueing and delivering).
// 2. Reliability: a second webhook whose receiver answers 500 until every event was tried, then
//    does not answer (each attempt times out) for 10 s, then answers 200: events sent (delivery
//    rows), arrivals, distinct webhook-ids, repeats, and whether every event was answered 200 after
//    the recovery (and how many ids were answered 200 more than once).
// 3. Schedules: the executor stopped (the figure is the starts', not test execution sharing the
//    cores), two replicas on the same database, 20 projects of 50 schedules each (the per-project
//    bound), each `* * * * *` (a real minute, no seconds field): per tick, the schedules, the ticks
//    recorded, the runs started (the runs schema's rows with that tick's idempotency key), the
//    duplicates (runs of one schedule on one tick beyond the first: must be 0), failed ticks, the
//    time from the due time to the last run's start, and each replica's CPU time.
// Figures only, no assertion.

import type { Client } from "@connectrpc/connect";
import {
  createCliContext,
  createEnvironment,
  createOrganization,
  createProject,
  createTestCases,
  createTestPlan,
  grantCredits,
  readTestCaseFile,
} from "@testrun/cli";
import {
  AutomationService,
  NotifyMode,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { serviceClient } from "@testrun/kit";
import { createTestDatabase, repoRoot, type ServiceProcess, startServiceProcess } from "@testrun/testing";
import pg from "pg";
import { seedDemo } from "../demo/seed.js";
import { localTargetsEgress, type System } from "../system.js";
import { startWebhookReceiver, type WebhookReceiver } from "../webhook-receiver.js";
import { cpuMs } from "./measure.js";
import { enterBenchPart } from "./part.js";

export interface AutomationTableOptions {
  /** Starts a fresh system on the given database. */
  start: (databaseUrl: string) => Promise<System>;
  adminDatabaseUrl: string;
  /** services/kit/dist/launch.js: replicas run the built code, as the system's services do. */
  launcher: string;
  latencyRuns: number;
  drainRuns: number;
  schedulesPerProject: number;
  scheduleProjects: number;
  scheduleTicks: number;
}

const retryDelaysMs = process.env.AUTOMATION_RETRY_DELAYS_MS ?? "1000,2000,4000,8000,8000,8000,8000,8000";
const timeoutMs = process.env.AUTOMATION_TIMEOUT_MS ?? "1000";
/** How long the receiver leaves attempts unanswered (each then times out) before it recovers. */
const hangMs = 10_000;

const healthYaml = `- name: bench health
  tags: [bench-automation]
  steps:
    - name: get health
      http: { method: GET, path: /health }
      expect: { status: 200 }
`;

/** Polls `check` every `everyMs` until it answers something; cheaper than a tight loop on PostgreSQL. */
async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs: number, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;

export async function automationTable(options: AutomationTableOptions): Promise<void> {
  enterBenchPart("the automation table, start-up");
  const databaseUrl = await createTestDatabase(options.adminDatabaseUrl);
  const system = await options.start(databaseUrl);
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const replicas: ServiceProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  try {
    await system.processes.get("automation")?.stop("SIGTERM");
    const replicaEnv = {
      ...system.env,
      ...localTargetsEgress,
      WEBHOOK_ALLOW_HTTP: "true",
      WEBHOOK_RETRY_DELAYS_MS: retryDelaysMs,
      WEBHOOK_TIMEOUT_MS: timeoutMs,
      PORT: "0",
      METRICS_PORT: "0",
      NODE_ENV: "production",
    };
    /** Starts `count` replicas one after another; answers when the first was listening. */
    const startReplicas = async (count: number) => {
      let firstListening = 0;
      for (let i = 0; i < count; i++) {
        replicas.push(
          await startServiceProcess("automation", replicaEnv, {
            keepOutput: false,
            launch: { file: process.execPath, args: [options.launcher, "automation"], cwd: repoRoot },
          }),
        );
        if (i === 0) firstListening = Date.now();
      }
      return firstListening;
    };
    const stopReplicas = async () => {
      for (const replica of replicas.splice(0)) await replica.stop("SIGTERM");
    };
    await startReplicas(1);
    // One client (one pooled HTTP/2 connection) per replica, as every service holds its clients: a
    // transport per call left each call's connection open for connect-node's 15 idle minutes, and
    // the 1,000 schedules' calls met the replica's connection cap (RPC_MAX_CONNECTIONS, 500), the
    // 501st connection closed as it opened (CANCEL).
    const clients = new Map<string, Client<typeof AutomationService>>();
    const automation = () => {
      const url = replicas[0]?.url ?? "";
      let client = clients.get(url);
      if (!client) {
        client = serviceClient(AutomationService, url, {
          token: system.env.SERVICE_TOKEN ?? "",
          timeoutMs: 30_000,
        });
        clients.set(url, client);
      }
      return client;
    };

    const ctx = createCliContext(system.env);
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    await grantCredits(ctx, { projectId: demo.projectId, amount: 1_000_000, reason: "benchmark" });
    const [health] = await createTestCases(ctx, {
      projectId: demo.projectId,
      testCases: readTestCaseFile(healthYaml, "bench-automation.yaml"),
    });
    const headers = { authorization: `Bearer ${demo.secret}`, "content-type": "application/json" };
    const body = JSON.stringify({ testCaseIds: [health?.id] });
    const startRun = async () => {
      const res = await fetch(`${system.gatewayUrl}/v1/runs`, { method: "POST", headers, body });
      if (res.status !== 201 && res.status !== 200)
        throw new Error(`POST /v1/runs: HTTP ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    };
    /** Starts `count` runs, `concurrency` at a time, each worker waiting `gapMs` between its starts. */
    const startRuns = async (count: number, concurrency: number, gapMs = 0) => {
      const ids: string[] = [];
      let started = 0;
      const worker = async () => {
        while (started < count) {
          started++;
          ids.push(await startRun());
          if (gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs));
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      return ids;
    };
    const finishedCount = async (ids: string[]) =>
      Number(
        (
          await db.query<{ n: string }>(
            "select count(*) as n from runs.runs where id = any($1) and finished_at is not null",
            [ids],
          )
        ).rows[0]?.n,
      );
    const actor = { kind: { case: "memberId" as const, value: demo.ownerMemberId } };
    const addWebhook = async (receiver: WebhookReceiver) => {
      const { webhook, secret } = await automation().createWebhook({
        actor,
        projectId: demo.projectId,
        url: receiver.url,
        events: [WebhookEvent.RUN_FINISHED],
        notifyMode: NotifyMode.EVERY_RUN,
      });
      receiver.setSecrets([secret]);
      return webhook?.id ?? "";
    };

    console.log(
      `\nAutomation (docs/automation.md): built replicas, WEBHOOK_RETRY_DELAYS_MS=${retryDelaysMs}, ` +
        `WEBHOOK_TIMEOUT_MS=${timeoutMs}, WEBHOOK_CONCURRENCY 8, TICK_INTERVAL_MS and FOLLOW_INTERVAL_MS 1000 (defaults)\n`,
    );

    // 1. Latency, then the backlog drained by 1 and by 2 replicas.
    enterBenchPart("the automation table, latency and backlog");
    const main = await startWebhookReceiver();
    receivers.push(main);
    await addWebhook(main);
    const firstArrivals = () => {
      const first = new Map<string, { receivedAt: number; body: string; verified: boolean }>();
      for (const hook of main.received) if (!first.has(hook.id)) first.set(hook.id, hook);
      return first;
    };
    await startRuns(options.latencyRuns, 1, 200);
    await until(
      async () => (firstArrivals().size >= options.latencyRuns ? true : undefined),
      `${options.latencyRuns} webhooks`,
      180_000,
    );
    const latencies = [...firstArrivals().values()]
      .map((hook) => {
        const run = (JSON.parse(hook.body) as { data: { run: { finishedAt: string } } }).data.run;
        return hook.receivedAt - Date.parse(run.finishedAt);
      })
      .sort((a, b) => a - b);
    const unverified = main.received.filter((hook) => !hook.verified).length;
    console.log(
      `Latency, a run's finishedAt to the receiver's arrival, ${latencies.length} one-test runs ` +
        `(started 5 a second, 1 replica): p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${(latencies.at(-1) ?? 0).toFixed(0)} ms; ` +
        `signatures not verifying: ${unverified}`,
    );

    console.log(
      `\n| replicas | deliveries (backlog) | s from the first replica listening to the last arrival | deliveries/s | per replica |`,
    );
    console.log("| --- | --- | --- | --- | --- |");
    for (const count of [1, 2]) {
      await stopReplicas();
      const before = firstArrivals().size;
      const ids = await startRuns(options.drainRuns, 8);
      await until(
        async () => ((await finishedCount(ids)) === ids.length ? true : undefined),
        "the backlog's runs finished",
        600_000,
        1000,
      );
      // From the first replica listening (start-up is not delivery): it follows at once.
      const began = await startReplicas(count);
      await until(
        async () => (firstArrivals().size >= before + ids.length ? true : undefined),
        "the backlog delivered",
        600_000,
      );
      const last = Math.max(...[...firstArrivals().values()].map((hook) => hook.receivedAt));
      const seconds = (last - began) / 1000;
      const rate = ids.length / seconds;
      console.log(
        `| ${count} | ${ids.length} | ${seconds.toFixed(1)} | ${rate.toFixed(0)} | ${(rate / count).toFixed(0)} |`,
      );
    }
    await stopReplicas();
    await startReplicas(1);

    // 2. Reliability: 500s, then no answer, then recovery.
    enterBenchPart("the automation table, reliability");
    type Answer = "500" | "hang" | "200";
    let answer = "500" as Answer;
    const answered: { id: string; answer: Answer }[] = [];
    const flakyHooks = await startWebhookReceiver({
      onReceived: (hook) => answered.push({ id: hook.id, answer }),
    });
    receivers.push(flakyHooks);
    flakyHooks.answerWith(500);
    const flakyWebhookId = await addWebhook(flakyHooks);
    const reliabilityRuns = Math.max(10, Math.round(options.latencyRuns / 2));
    await startRuns(reliabilityRuns, 4);
    await until(
      async () => (new Set(answered.map((a) => a.id)).size >= reliabilityRuns ? true : undefined),
      "every event tried once",
      180_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 5_000)); // more 500s: retries of each
    answer = "hang";
    flakyHooks.answerWith("hang");
    await new Promise((resolve) => setTimeout(resolve, hangMs));
    answer = "200";
    flakyHooks.answerWith(200);
    const recoveredAt = Date.now();
    const pending = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            "select count(*) as n from automation.deliveries where webhook_id = $1 and state <> 'delivered'",
            [flakyWebhookId],
          )
        ).rows[0]?.n,
      );
    await until(
      async () => ((await pending()) === 0 ? true : undefined),
      "every delivery delivered",
      300_000,
    );
    const doneAt = Date.now();
    const events = (
      await db.query<{ n: string; failed: string; attempts: string }>(
        `select count(*) as n, count(*) filter (where state = 'failed') as failed, sum(attempts) as attempts
         from automation.deliveries where webhook_id = $1`,
        [flakyWebhookId],
      )
    ).rows[0];
    const distinct = new Set(answered.map((a) => a.id));
    const ok = answered.filter((a) => a.answer === "200");
    const okIds = new Set(ok.map((a) => a.id));
    const by = (kind: string) => answered.filter((a) => a.answer === kind).length;
    console.log(
      `\nReliability (1 replica): ${events?.n} events sent (delivery rows, ${events?.failed} FAILED, ` +
        `${events?.attempts} attempts recorded); ${answered.length} arrivals: ${by("500")} answered 500, ` +
        `${by("hang")} left unanswered for ${hangMs / 1000} s (timed out), ${ok.length} answered 200; ` +
        `${distinct.size} distinct webhook-ids, ${answered.length - distinct.size} arrivals repeating an id; ` +
        `after the recovery ${okIds.size} of ${events?.n} events answered 200 ` +
        `(${ok.length - okIds.size} ids answered 200 more than once), the last ` +
        `${((doneAt - recoveredAt) / 1000).toFixed(1)} s after it; ` +
        `signatures not verifying: ${flakyHooks.received.filter((h) => !h.verified).length}`,
    );

    // 3. Schedules: two replicas, the executor stopped.
    enterBenchPart("the automation table, schedules");
    await system.processes.get("executor")?.stop("SIGTERM");
    await stopReplicas();
    await startReplicas(2);
    const { organization, owner } = await createOrganization(ctx, {
      name: "Schedules benchmark",
      ownerEmail: "schedules@bench.example",
      ownerName: "Schedules Owner",
    });
    const scheduler = { kind: { case: "memberId" as const, value: owner?.id ?? "" } };
    let creating = Date.now();
    for (let p = 0; p < options.scheduleProjects; p++) {
      const project = await createProject(ctx, {
        organizationId: organization?.id ?? "",
        name: `bench ${p}`,
      });
      const environment = await createEnvironment(ctx, {
        projectId: project.id,
        name: "local",
        baseUrl: system.demoTargetUrl,
        isDefault: true,
      });
      await createTestCases(ctx, {
        projectId: project.id,
        testCases: readTestCaseFile(healthYaml, "bench-automation.yaml"),
      });
      const plan = await createTestPlan(ctx, {
        projectId: project.id,
        name: "health",
        testCases: ["bench health"],
      });
      await grantCredits(ctx, { projectId: project.id, amount: 100_000, reason: "benchmark" });
      if (p === 0) creating = Date.now();
      await Promise.all(
        Array.from({ length: options.schedulesPerProject }, (_, i) =>
          automation().createSchedule({
            actor: scheduler,
            projectId: project.id,
            name: `bench ${p}.${i}`,
            cron: "* * * * *",
            timeZone: "UTC",
            environmentId: environment.id,
            selection: { case: "testPlanId", value: plan.id },
            paused: false,
          }),
        ),
      );
    }
    const created = Date.now();
    const schedules = options.scheduleProjects * options.schedulesPerProject;
    console.log(
      `\nSchedules: ${schedules} (\`* * * * *\`, ${options.scheduleProjects} projects of ${options.schedulesPerProject}) ` +
        `created in ${((created - creating) / 1000).toFixed(1)} s; 2 replicas, the executor stopped\n`,
    );
    console.log(
      "| tick (due) | schedules | ticks recorded | runs started | duplicates (by key / by name) | failed ticks | due to last start | CPU s replica 1 / 2 |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
    // Every schedule's first tick is the minute after its creation: the ticks after `created`.
    const firstDue = Math.ceil((created + 1) / 60_000) * 60_000;
    for (let t = 0; t < options.scheduleTicks; t++) {
      const due = new Date(firstDue + t * 60_000);
      const cpuBefore = replicas.map((r) => cpuMs(r.process.pid));
      const figures = async () =>
        (
          await db.query<{
            ticks: string;
            failed: string;
            runs: string;
            schedules: string;
            last: Date | null;
            named: string;
            names: string;
          }>(
            // Duplicates counted twice: by the tick's idempotency key, and (independently of it) by
            // the schedule's name among the runs created in the tick's minute.
            `select (select count(*) from automation.schedule_ticks where due_at = $1) as ticks,
                    (select count(*) from automation.schedule_ticks where due_at = $1 and state = 'failed') as failed,
                    count(r.id) as runs,
                    count(distinct split_part(r.idempotency_key, '@', 1)) as schedules,
                    max(r.created_at) as last,
                    (select count(*) from runs.runs n where n.name like 'bench %(scheduled)'
                       and n.created_at >= $1 and n.created_at < $1::timestamptz + interval '1 minute') as named,
                    (select count(distinct n.name) from runs.runs n where n.name like 'bench %(scheduled)'
                       and n.created_at >= $1 and n.created_at < $1::timestamptz + interval '1 minute') as names
             from runs.runs r where r.idempotency_key like '%@' || $2`,
            [due, due.toISOString()],
          )
        ).rows[0];
      // Done when every schedule's run started, or a minute after the due time (the next tick's).
      const row = await until(
        async () => {
          const now = await figures();
          return Number(now?.runs) >= schedules || Date.now() > due.getTime() + 59_000 ? now : undefined;
        },
        `the tick of ${due.toISOString()}`,
        180_000,
        500,
      );
      const cpu = replicas.map((r, i) => ((cpuMs(r.process.pid) - (cpuBefore[i] ?? 0)) / 1000).toFixed(1));
      const runs = Number(row?.runs);
      console.log(
        `| ${due.toISOString().slice(11, 19)} | ${schedules} | ${row?.ticks} | ${runs} | ${runs - Number(row?.schedules)} / ${Number(row?.named) - Number(row?.names)} | ` +
          `${row?.failed} | ${row?.last ? ((row.last.getTime() - due.getTime()) / 1000).toFixed(1) : "-"} s | ${cpu.join(" / ")} |`,
      );
      // The next tick's figures start at its due time.
      const wait = firstDue + (t + 1) * 60_000 - Date.now();
      if (t + 1 < options.scheduleTicks && wait > 0)
        await new Promise((resolve) => setTimeout(resolve, wait));
    }
  } finally {
    for (const receiver of receivers) await receiver.close();
    for (const replica of replicas) await replica.stop("SIGTERM");
    await db.end();
    await system.stop();
  }
}
