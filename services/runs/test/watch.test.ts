import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  RunStatus,
  RunsService,
  type TestResult,
  TestStatus,
  WatchMode,
  type WatchRunResponse,
  WatchRunResponseSchema,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { type Orm, openDatabase, serviceClient } from "@testrun/kit";
import {
  apiKey,
  eventually,
  httpStep,
  leaseOf,
  operator,
  type Runs,
  type RunsProcessStack,
  type RunsProject,
  rejects,
  type ServiceProcess,
  seedRunsProject,
  startRunsProcessStack,
  startServiceProcess,
} from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import { pino } from "pino";
import { database } from "../src/db/index.js";
import { Links } from "../src/links.js";
import { RunEvents } from "../src/run-events.js";
import { RunReads } from "../src/store/reads.js";
import { RunWatches } from "../src/watch.js";

/** Every message of a WatchRun stream in `mode`, one at a time; `cancel()` is the caller going away. */
function watchMessages(
  client: Runs,
  request: { actor: RunsProject["key"]; projectId: string; runId: string },
  mode: WatchMode,
) {
  const abort = new AbortController();
  const messages = client
    .watchRun({ ...request, mode }, { signal: abort.signal, timeoutMs: 0 })
    [Symbol.asyncIterator]();
  return {
    async next(): Promise<WatchRunResponse | undefined> {
      const { value, done } = await messages.next();
      return done ? undefined : (value as WatchRunResponse);
    },
    cancel: () => abort.abort(),
  };
}

/** A WatchRun stream read one message at a time; `cancel()` is the caller going away. */
function watch(client: Runs, request: { actor: RunsProject["key"]; projectId: string; runId: string }) {
  const abort = new AbortController();
  const messages = client.watchRun(request, { signal: abort.signal, timeoutMs: 0 })[Symbol.asyncIterator]();
  return {
    /** The next message's run; undefined when the stream ended. */
    async next() {
      const { value, done } = await messages.next();
      return done ? undefined : (value as WatchRunResponse).run;
    },
    cancel: () => abort.abort(),
  };
}

describe("runs service: WatchRun", () => {
  let stack: RunsProcessStack;
  let project: RunsProject;
  /** A second replica on the same database and Redis, which re-reads on its own only every 10 minutes. */
  let replica: ServiceProcess;
  let onReplica: Runs;

  before(async () => {
    // The first replica's fallback re-read is quick, so a change made behind its back shows soon.
    stack = await startRunsProcessStack({ WATCH_REFRESH_MS: "300" });
    replica = await startServiceProcess("runs", {
      ...stack.env,
      WATCH_REFRESH_MS: "600000",
      WATCH_MAX_STREAMS: "1",
    });
    onReplica = serviceClient(RunsService, replica.url, { token: String(stack.env.SERVICE_TOKEN) });
  });
  beforeEach(async () => {
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await replica?.stop("SIGTERM");
    await stack?.stop();
  });

  const startOne = async () =>
    (
      await stack.runs.startRun({
        actor: project.key,
        projectId: project.projectId,
        selection: { case: "testCaseIds", value: { ids: [project.cases[0] ?? ""] } },
      })
    ).run;
  const ids = (runId: string) => ({ actor: project.key, projectId: project.projectId, runId });
  const claim = async (testResultId: string) =>
    (await stack.executor.claimTest({ testResultId, executorId: "pod-a/0" })).assignment;

  it("sends the run at once, again after each change, and ends after sending the finished run", async () => {
    const run = await startOne();
    const stream = watch(stack.runs, ids(run?.id ?? ""));
    const first = await stream.next();
    expect(first?.status).to.equal(RunStatus.RUNNING);
    expect(first?.tests.map((t) => t.status)).to.deep.equal([TestStatus.QUEUED]);
    expect(first?.url).to.equal(run?.url);

    const a = await claim(run?.tests[0]?.id ?? "");
    const running = await stream.next();
    expect(running?.tests[0]?.status).to.equal(TestStatus.RUNNING);
    expect(running?.tests[0]?.attempt).to.equal(1);
    expect(running?.finished).to.equal(false);

    await stack.executor.completeTest({
      ...leaseOf(a),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 7n,
    });
    const finished = await stream.next();
    expect(finished?.status).to.equal(RunStatus.PASSED);
    expect(finished?.finished).to.equal(true);
    expect(finished?.tests[0]?.durationMs).to.equal(7n);
    expect(await stream.next()).to.equal(undefined);

    // A finished run is sent once, and the stream ends.
    const late = watch(stack.runs, ids(run?.id ?? ""));
    expect((await late.next())?.finished).to.equal(true);
    expect(await late.next()).to.equal(undefined);
  });

  it("reads the run again every WATCH_REFRESH_MS, so a change without a notice still arrives", async () => {
    const run = await startOne();
    const stream = watch(stack.runs, ids(run?.id ?? ""));
    try {
      expect((await stream.next())?.tests[0]?.summary).to.equal("");
      // Written straight to the database: no replica announced it.
      await stack.db.query("update runs.test_results set summary = 'changed quietly' where id = $1", [
        run?.tests[0]?.id,
      ]);
      expect((await stream.next())?.tests[0]?.summary).to.equal("changed quietly");
    } finally {
      stream.cancel();
    }
  });

  it("sees on one replica the changes made through another (notices through Redis)", async () => {
    const run = await startOne();
    const runId = run?.id ?? "";
    const stream = watch(onReplica, ids(runId));
    expect((await stream.next())?.tests[0]?.status).to.equal(TestStatus.QUEUED);
    // Through the first replica, while this one would re-read on its own only in 10 minutes.
    const a = await claim(run?.tests[0]?.id ?? "");
    expect((await stream.next())?.tests[0]?.status).to.equal(TestStatus.RUNNING);
    await stack.executor.releaseTest({ ...leaseOf(a), reason: "shutting down" });
    const released = await stream.next();
    expect(released?.tests[0]?.status).to.equal(TestStatus.QUEUED);
    expect(released?.tests[0]?.attempt).to.equal(1);
    await stack.runs.cancelRun({ ...ids(runId), actor: operator() });
    const cancelled = await stream.next();
    expect(cancelled?.status).to.equal(RunStatus.SKIPPED);
    expect(cancelled?.finished).to.equal(true);
    expect(await stream.next()).to.equal(undefined);
  });

  it("ends a stream whose caller went away and frees its place; refuses streams beyond WATCH_MAX_STREAMS", async () => {
    const run = await startOne();
    const first = watch(onReplica, ids(run?.id ?? ""));
    expect((await first.next())?.id).to.equal(run?.id);
    // The replica allows one stream at a time.
    const refused = watch(onReplica, ids(run?.id ?? ""));
    const error = await refused.next().then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).to.equal(Code.ResourceExhausted);

    first.cancel();
    expect(
      await first.next().then(
        () => "ended",
        (e: unknown) => Code[ConnectError.from(e).code],
      ),
    ).to.equal("Canceled");
    // Once the replica saw the caller leave, the place is free again.
    const next = await eventually(async () => {
      const stream = watch(onReplica, ids(run?.id ?? ""));
      const got = await stream.next().catch((e: unknown) => {
        if (ConnectError.from(e).code !== Code.ResourceExhausted) throw e;
        return undefined;
      });
      if (got) return stream;
      return undefined;
    }, "the cancelled stream's place to be freed");
    next.cancel();
  });

  it("logs callers closing their streams quietly: no error line, however many close at once", async () => {
    const run = await startOne();
    const count = 300;
    const quiet = await startServiceProcess("runs", {
      ...stack.env,
      REDIS_URL: stack.redisUrlOf("runs"),
      WATCH_REFRESH_MS: "300",
      WATCH_MAX_STREAMS: String(count),
    });
    const client = serviceClient(RunsService, quiet.url, { token: String(stack.env.SERVICE_TOKEN) });
    const openAll = async () => {
      const streams = Array.from({ length: count }, () => watch(client, ids(run?.id ?? "")));
      await Promise.all(streams.map((stream) => stream.next()));
      return streams;
    };
    try {
      // Streams mid-flight: some are being written to as their callers close them, which is what
      // made the replica log ERR_HTTP2_INVALID_STREAM as a crash.
      const streams = await openAll();
      const pending = streams.map((stream) => stream.next().catch(() => undefined));
      await stack.db.query("update runs.test_results set summary = 'changed' where id = $1", [
        run?.tests[0]?.id,
      ]);
      await Promise.race(pending);
      for (const stream of streams) stream.cancel();
      await Promise.all(pending);
      // Every place is free again once the replica has ended each closed stream (and logged it).
      const again = await eventually(
        () => openAll().catch(() => undefined),
        "every closed stream's place to be freed",
      );
      for (const stream of again) stream.cancel();
    } finally {
      await quiet.stop("SIGTERM");
    }
    const errors = quiet.output().filter((line) => /"level":"(error|fatal)"/.test(line));
    expect(errors, errors[0]).to.deep.equal([]);
  });

  it("refuses, before any message, a run of another project or an unknown run", async () => {
    const run = await startOne();
    const other = await seedRunsProject(stack, 0n);
    const otherKey = apiKey(other.members.editor, other.projectId);
    const first = (request: Parameters<typeof watch>[1]) => watch(stack.runs, request).next();
    await rejects(
      first({ actor: otherKey, projectId: other.projectId, runId: run?.id ?? "" }),
      Code.NotFound,
    );
    await rejects(
      first({ actor: otherKey, projectId: project.projectId, runId: run?.id ?? "" }),
      Code.NotFound,
    );
    await rejects(first(ids("run_unknown")), Code.NotFound);
    await rejects(
      first({
        actor: undefined as unknown as RunsProject["key"],
        projectId: project.projectId,
        runId: run?.id ?? "",
      }),
      Code.InvalidArgument,
    );
  });

  it("ends its open streams cleanly when the replica shuts down, rather than hold the shutdown", async () => {
    const run = await startOne();
    // Calls still open when the shutdown begins would get a minute, longer than this test may take.
    const leaving = await startServiceProcess("runs", {
      ...stack.env,
      WATCH_REFRESH_MS: "600000",
      SHUTDOWN_TIMEOUT_MS: "60000",
    });
    const client = serviceClient(RunsService, leaving.url, { token: String(stack.env.SERVICE_TOKEN) });
    const stream = watch(client, ids(run?.id ?? ""));
    expect((await stream.next())?.finished).to.equal(false);
    const [exitCode, end] = await Promise.all([leaving.stop("SIGTERM"), stream.next()]);
    expect(end).to.equal(undefined);
    expect(exitCode).to.equal(0);
  });

  describe("changes only", () => {
    /** A run of `count` test cases created for it (named alike, so that only their number differs). */
    const startOf = async (count: number) => {
      const { catalog } = stack.catalog;
      const cases: string[] = [];
      for (let i = 0; i < count; i++) {
        const { testCase } = await catalog.createTestCase({
          actor: operator(),
          projectId: project.projectId,
          name: `case ${String(i).padStart(3, "0")}`,
          tags: [],
          enabled: true,
          steps: [httpStep("/health")],
        });
        cases.push(testCase?.id ?? "");
      }
      await stack.billing.grantCredits({
        actor: operator(),
        projectId: project.projectId,
        amount: BigInt(count),
        reason: "test grant",
        idempotencyKey: `grant-${project.projectId}-${count}`,
      });
      const { run } = await stack.runs.startRun({
        actor: project.key,
        projectId: project.projectId,
        selection: { case: "testCaseIds", value: { ids: cases } },
        name: "watched",
      });
      return run;
    };

    it("WATCH_MODE_CHANGES sends the run once, then only what changed: a change's size does not grow with the run's", async () => {
      const small = await startOf(1);
      const large = await startOf(40);
      /** The message a claim of the run's first test brings, after the whole run. */
      const claimed = async (run: typeof small) => {
        const stream = watchMessages(stack.runs, ids(run?.id ?? ""), WatchMode.CHANGES);
        try {
          const first = await stream.next();
          expect(first?.run?.tests).to.have.length(run?.tests.length ?? -1);
          await claim(run?.tests[0]?.id ?? "");
          const next = await stream.next();
          return { first, next };
        } finally {
          stream.cancel();
        }
      };
      const [a, b] = [await claimed(small), await claimed(large)];
      for (const { first, next } of [a, b]) {
        expect(next?.run).to.equal(undefined);
        // Only the test that changed, whole, and the run's own fields as they are now.
        expect(next?.change?.tests.map((t) => [t.status, t.attempt])).to.deep.equal([
          [TestStatus.RUNNING, 1],
        ]);
        expect(next?.change?.status).to.equal(RunStatus.RUNNING);
        expect(next?.sinceVersion).to.equal(first?.run?.version);
        expect(Number(next?.change?.version)).to.be.greaterThan(Number(first?.run?.version));
      }
      const size = (message: WatchRunResponse | undefined) =>
        message ? toBinary(WatchRunResponseSchema, message).length : Number.NaN;
      // The whole runs differ by 39 tests; their changes only by what varint timestamps may take.
      expect(size(b.first) - size(a.first)).to.be.greaterThan(39 * 100);
      expect(Math.abs(size(b.next) - size(a.next))).to.be.lessThan(8);
    });

    it("WATCH_MODE_FINISH sends the run, then nothing until the finished run (the REST long-poll)", async () => {
      const run = await startOf(2);
      const stream = watchMessages(stack.runs, ids(run?.id ?? ""), WatchMode.FINISH);
      try {
        expect((await stream.next())?.run?.finished).to.equal(false);
        const [first, second] = [run?.tests[0]?.id ?? "", run?.tests[1]?.id ?? ""];
        const a = await claim(first);
        const b = await claim(second);
        await stack.executor.completeTest({
          ...leaseOf(a),
          status: TestStatus.PASSED,
          summary: "",
          durationMs: 3n,
        });
        await stack.executor.completeTest({
          ...leaseOf(b),
          status: TestStatus.FAILED,
          summary: "no",
          durationMs: 4n,
        });
        // Four changes, one message: the finished run, whole.
        const finished = await stream.next();
        expect(finished?.run?.status).to.equal(RunStatus.FAILED);
        expect(finished?.run?.tests.map((t) => t.status)).to.deep.equal([
          TestStatus.PASSED,
          TestStatus.FAILED,
        ]);
        expect(await stream.next()).to.equal(undefined);
      } finally {
        stream.cancel();
      }
    });

    it("the watchers of one run on one replica share one read per change", async () => {
      // RunWatches in this process, on the stack's database and Redis, counting the reads it makes:
      // the changes are the runs service's, announced through Redis as ever.
      const orm: Orm = await openDatabase(String(stack.env.DATABASE_URL), database, 2);
      const redis = new Redis(String(stack.env.REDIS_URL));
      const logger = pino({ level: "silent" });
      const events = new RunEvents(redis, logger);
      const reads = new RunReads(orm);
      const counted = { whole: 0, changes: 0 };
      const watches = new RunWatches(
        events,
        {
          getRun: (projectId, runId) => {
            counted.whole++;
            return reads.getRun(projectId, runId);
          },
          getRunChanges: (runId, version) => {
            counted.changes++;
            return reads.getRunChanges(runId, version);
          },
        },
        new Links("https://app.testrun.example"),
        // No refresh during the test: every read is a change's.
        { refreshMs: 600_000, readSpacingMs: 100, maxStreams: 100 },
        logger,
      );
      const abort = new AbortController();
      try {
        const run = await startOf(3);
        const runId = run?.id ?? "";
        const streams = Array.from({ length: 6 }, (_, i) =>
          watches.watch(
            project.projectId,
            runId,
            i % 2 ? WatchMode.CHANGES : WatchMode.UNSPECIFIED,
            abort.signal,
          ),
        );
        const firsts = await Promise.all(streams.map((stream) => stream.next()));
        expect(firsts.every(({ value }) => value?.run?.id === runId)).to.equal(true);
        expect(counted.whole).to.equal(1);
        // Each change, one at a time: every stream gets it, from one read.
        for (const test of run?.tests ?? []) {
          const assignment = await claim(test.id);
          const got = await Promise.all(streams.map((stream) => stream.next()));
          expect(
            got.map(
              ({ value }) =>
                (value?.change ?? value?.run)?.tests.find((t: TestResult) => t.id === test.id)?.status,
            ),
          ).to.deep.equal(Array(6).fill(TestStatus.RUNNING));
          await stack.executor.completeTest({
            ...leaseOf(assignment),
            status: TestStatus.PASSED,
            summary: "",
            durationMs: 1n,
          });
          await Promise.all(streams.map((stream) => stream.next()));
        }
        // Six changes seen by six streams: six reads (not thirty-six), and the whole run read once.
        // (At most two more: the notices' subscription, once made, reads what it may have missed.)
        expect(counted.changes).to.be.within(6, 8);
        expect(counted.whole).to.equal(1);
        const ends = await Promise.all(streams.map((stream) => stream.next()));
        expect(ends.every(({ done }) => done)).to.equal(true);
      } finally {
        abort.abort();
        watches.close();
        events.close();
        redis.disconnect();
        await orm.close();
      }
    });
  });
});
