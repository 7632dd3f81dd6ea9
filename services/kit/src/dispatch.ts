import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { type TestDispatch, TestDispatchSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Redis } from "ioredis";

/**
 * The executors' queue: Redis Streams the runs service appends tests to and executors read as one
 * consumer group. Postgres stays the source of truth (the runs service republishes what is still
 * QUEUED or whose lease lapsed), so losing a stream delays tests but never loses them.
 *
 * A test goes to the stream of its kind: `spec` for a Playwright spec (its executor must make the
 * user-code sandbox), `browser` when one of its steps is a browser step (its executor must drive a
 * browser), else `http`. Executors read the streams of the kinds they are configured for
 * (EXECUTOR_STEP_KINDS), so separate pools take only their own work and quick API tests never queue
 * behind browser tests (docs/scaling.md, "Executor pools").
 */
export const testKinds = ["http", "browser", "spec"] as const;
export type TestKind = (typeof testKinds)[number];
/** Each kind's stream. HTTP-only tests keep the stream they had before browser steps existed. */
export const testStreams: Readonly<Record<TestKind, string>> = {
  http: "testrun:tests",
  browser: "testrun:tests:browser",
  spec: "testrun:tests:spec",
};
/** The stream of HTTP-only tests. */
export const testStream = testStreams.http;
export const executorGroup = "executors";
/**
 * A Playwright spec test's step results at most (CompleteTestRequest.step_results): the runs
 * service refuses more, and the executor fails a spec of more test()s saying so.
 */
export const maxSpecStepResults = 200;

/** The stream field holding a serialized testrun.runs.v1.TestDispatch. */
const dispatchField = "dispatch";

/** A test to hand to the executors, and what it needs of them. */
export interface QueuedTest {
  dispatch: TestDispatch;
  kind: TestKind;
}

/** Appends tests to the queue in one round trip, each to the stream of its kind. */
export async function publishTests(redis: Redis, tests: readonly QueuedTest[]): Promise<void> {
  if (tests.length === 0) return;
  const batch = redis.pipeline();
  for (const { dispatch, kind } of tests) {
    batch.xadd(testStreams[kind], "*", dispatchField, Buffer.from(toBinary(TestDispatchSchema, dispatch)));
  }
  const results = await batch.exec();
  const failed = results?.find(([error]) => error);
  if (failed?.[0]) throw failed[0];
}

/** Decodes a stream entry's fields (as returned by XREADGROUP with `xreadgroupBuffer`); undefined if malformed. */
export function decodeDispatch(fields: readonly Buffer[]): TestDispatch | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i]?.toString() === dispatchField) {
      try {
        return fromBinary(TestDispatchSchema, fields[i + 1] as Buffer);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
