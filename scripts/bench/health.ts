// `make bench`'s test-health table (issue 40; docs/development.md, "Benchmarks"): a project seeded
// with BENCH_HEALTH_RESULTS results (default 1,000,000) over 2,000 cases, 3 environments and 89
// days, straight into the runs schema; then p50/p99 of a case's history, the project's health list
// and a 500-test run's GET /v1/runs/:id (which carries each test's health), at a few concurrent
// callers; and the CPU a completed test costs the runs service and PostgreSQL with the health
// trigger on and off (the same 200-test run on the executor, twice).
import { readdirSync, readFileSync } from "node:fs";
import { HealthState } from "@testrun/gen/testrun/runs/v1/health_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { serviceClient } from "@testrun/kit";
import pg from "pg";
import type { System } from "../system.js";

interface HealthBenchOptions {
  system: System;
  databaseUrl: string;
  projectId: string;
  /** Runs a run of `tag`'s cases to its end through the gateway; answers its id and environment. */
  runTagged: (tag: string) => Promise<{ id: string; environmentId: string }>;
  /** The CPU time of the runs service's process so far, in ms. */
  runsCpuMs: () => number;
  results: number;
}

const cases = 2_000;
const environments = 3;
// Within the default history retention (90 days), which the reconciler prunes by.
const days = 89;

/** The CPU time in ms of a PostgreSQL server's processes so far: the postmaster's (with its reaped children) and its live children's. */
function postgresCpuMs(postmaster: number): number {
  const ticks = (pid: number | string, withChildren: boolean) => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const own = Number(fields[11]) + Number(fields[12]);
    return withChildren ? own + Number(fields[13]) + Number(fields[14]) : own;
  };
  let total = ticks(postmaster, true);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === postmaster) total += ticks(entry, false);
    } catch {}
  }
  return total * 10;
}

/** p50 and p99 (ms) of `count` calls of `call` by `parallel` callers at once. */
async function latencies(call: (i: number) => Promise<unknown>, count: number, parallel: number) {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        const began = performance.now();
        await call(i);
        times.push(performance.now() - began);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)] ?? 0;
  return `${at(0.5).toFixed(1)} ms / ${at(0.99).toFixed(1)} ms`;
}

export async function healthTable(options: HealthBenchOptions): Promise<void> {
  const db = new pg.Client({ connectionString: options.databaseUrl });
  await db.connect();
  try {
    const { projectId } = options;
    // The 500-test run first: the seeded history's first environment is the one its runs use.
    const big = await options.runTagged("health500");
    const environmentId = big.environmentId;
    const began = performance.now();
    // Seeded runs of 100 results each, spread over 90 days, the cases' outcomes mostly passing with
    // one case in ten flaky; straight into the tables (the trigger records results as they end,
    // not rows inserted final), then each case's health built from its latest 30 results.
    const runs = Math.ceil(options.results / 100);
    await db.query(
      `insert into runs.runs (id, project_id, environment_id, environment_base_url, name, status, total_tests,
         passed_tests, credits_charged, charge_state, started_at, finished_at, created_at)
       select 'run_bench' || g, $1, case when g % 3 = 0 then $2 else 'env_bench' || (g % 3) end, 'http://bench', 'bench ' || g,
         'passed', 100, 100, 100, 'charged', t, t, t
       from generate_series(1, $3::int) g, lateral (select now() - (g::float8 / $3) * interval '${days} days' as t) x`,
      [projectId, environmentId, runs],
    );
    await db.query(
      `insert into runs.test_results (id, run_id, test_case_id, test_case_version, name, position, status, steps,
         summary, duration_ms, attempt, queued_at, started_at, finished_at, step_results)
       select 'tr_bench' || r || '_' || p, 'run_bench' || r, 'tc_bench' || ((r * 100 + p) % ${cases}), 1,
         'bench case ' || ((r * 100 + p) % ${cases}), p,
         case when ((r * 100 + p) % ${cases}) % 10 = 0 and random() < 0.2 then 'failed' else 'passed' end,
         '[]', '', 50 + (random() * 100)::int, 1, x.t, x.t, x.t, '[]'
       from generate_series(1, $1::int) r, generate_series(0, 99) p,
         lateral (select now() - (r::float8 / $1) * interval '${days} days' as t) x`,
      [runs],
    );
    await db.query(
      `insert into runs.case_health (project_id, test_case_id, environment_id, name, case_version, judged, recent,
         results_total, failures_total, last_result, last_result_at, window_failures)
       select $1, test_case_id, environment_id, max(name), 1,
         case when bool_or(status = 'failed') filter (where n <= 30) then 'flaky' else 'stable' end,
         coalesce(jsonb_agg(jsonb_build_object('run', run_id, 'id', id, 'v', 1, 'at', finished_at,
           'o', case when status = 'failed' then 'f' else 'p' end, 'd', duration_ms) order by n) filter (where n <= 30), '[]'),
         count(*), count(*) filter (where status = 'failed'),
         jsonb_build_object('run', max(run_id), 'id', max(id), 'v', 1, 'at', max(finished_at)), max(finished_at),
         count(*) filter (where n <= 30 and status = 'failed')
       from (select t.*, r.environment_id, row_number() over (partition by t.test_case_id, r.environment_id
               order by t.finished_at desc) as n
             from runs.test_results t join runs.runs r on r.id = t.run_id where r.id like 'run_bench%') s
       group by test_case_id, environment_id`,
      [projectId],
    );
    await db.query("analyze runs.test_results; analyze runs.runs; analyze runs.case_health");
    console.log(
      `\nTest health (${options.results.toLocaleString("en")} results seeded over ${cases} cases, ${environments} environments, ${days} days, in ${((performance.now() - began) / 1000).toFixed(0)} s):\n`,
    );

    const runsUrl = `http://127.0.0.1:${options.system.serviceEnvs.get("runs")?.PORT}`;
    const client = serviceClient(RunsService, runsUrl, {
      token: String(options.system.env.SERVICE_TOKEN),
      timeoutMs: 30_000,
    });
    const actor = { kind: { case: "operator" as const, value: { name: "bench" } } };
    const caseOf = (i: number) => `tc_bench${(i * 7919) % cases}`;
    console.log("| read | p50 / p99 (8 callers) |\n| --- | --- |");
    console.log(
      `| a case's history (50 entries, one environment) | ${await latencies(
        (i) =>
          client.getTestCaseHistory({
            actor,
            projectId,
            testCaseId: caseOf(i),
            environmentId,
          }),
        400,
        8,
      )} |`,
    );
    console.log(
      `| a case's history (50 entries, every environment) | ${await latencies(
        (i) => client.getTestCaseHistory({ actor, projectId, testCaseId: caseOf(i) }),
        400,
        8,
      )} |`,
    );
    console.log(
      `| the health page (100 cases of 6,000, by impact) | ${await latencies(
        () => client.listTestHealth({ actor, projectId, limit: 100 }),
        200,
        8,
      )} |`,
    );
    console.log(
      `| the health page, flaky ones of one environment | ${await latencies(
        () =>
          client.listTestHealth({
            actor,
            projectId,
            environmentId,
            states: [HealthState.FLAKY],
          }),
        200,
        8,
      )} |`,
    );
    console.log(
      `| GET a 500-test run with each test's health (the runs service's GetRun) | ${await latencies(
        () => client.getRun({ actor, projectId, runId: big.id }),
        100,
        8,
      )} |`,
    );

    // The cost of recording health at each completion: the trigger on, then off.
    const [{ setting }] = (
      await db.query<{ setting: string }>("select current_setting('data_directory') as setting")
    ).rows as [{ setting: string }];
    const postmaster = Number(readFileSync(`${setting}/postmaster.pid`, "utf8").split("\n")[0]);
    /**
     * The CPU per test of a 200-test run of `tag`, with `trigger` on, off, then on again (the
     * runs service's and PostgreSQL's), as a table; answers how much the trigger adds, on average.
     */
    const onAndOff = async (title: string, tag: string, trigger: string, what: string) => {
      const perTest = async () => {
        const runsBefore = options.runsCpuMs();
        const pgBefore = postgresCpuMs(postmaster);
        await options.runTagged(tag);
        return {
          runs: (options.runsCpuMs() - runsBefore) / 200,
          postgres: (postgresCpuMs(postmaster) - pgBefore) / 200,
        };
      };
      const on = await perTest();
      await db.query(`alter table runs.test_results disable trigger ${trigger}`);
      const off = await perTest();
      await db.query(`alter table runs.test_results enable trigger ${trigger}`);
      const onAgain = await perTest();
      console.log(`\n| ${title} | runs service | PostgreSQL |\n| --- | --- | --- |`);
      for (const [name, figure] of [
        [`${what} on`, on],
        [`${what} off (trigger disabled)`, off],
        [`${what} on again`, onAgain],
      ] as const)
        console.log(`| ${name} | ${figure.runs.toFixed(2)} ms | ${figure.postgres.toFixed(2)} ms |`);
      const added =
        (on.runs + on.postgres + onAgain.runs + onAgain.postgres) / 2 / (off.runs + off.postgres) - 1;
      console.log(
        `\n${what} adds ${(added * 100).toFixed(0)}% to the CPU per test (runs service and PostgreSQL together).`,
      );
    };
    await onAndOff(
      "CPU per completed test (200-test runs)",
      "health200",
      "test_results_record_case_health",
      "Health",
    );

    // Failure groups: a comparison of two 500-test runs, and the grouping trigger's cost per failed test.
    const again = await options.runTagged("health500");
    console.log(
      `\n| comparison | p50 / p99 (8 callers) |\n| --- | --- |\n| CompareRuns of two 500-test runs | ${await latencies(
        () => client.compareRuns({ actor, projectId, runId: again.id, baseRunId: big.id }),
        100,
        8,
      )} |`,
    );
    await onAndOff(
      "CPU per failed test (200-test runs, one failure group)",
      "fail200",
      "test_results_group_failures",
      "Grouping",
    );
  } finally {
    await db.end();
  }
}
