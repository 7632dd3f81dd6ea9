import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { type TestDispatch, TestDispatchSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Redis } from "ioredis";

/**
 * The executors' queue: a Redis Stream the runs service appends tests to and executors read as one
 * consumer group. Postgres stays the source of truth (the runs service republishes what is still
 * QUEUED or whose lease lapsed), so losing the stream delays tests but never loses them.
 */
export const testStream = "testrun:tests";
export const executorGroup = "executors";
/** The stream field holding a serialized testrun.runs.v1.TestDispatch. */
const dispatchField = "dispatch";

/** Appends tests to the queue in one round trip. */
export async function publishTests(redis: Redis, dispatches: readonly TestDispatch[]): Promise<void> {
  if (dispatches.length === 0) return;
  const batch = redis.pipeline();
  for (const dispatch of dispatches) {
    batch.xadd(testStream, "*", dispatchField, Buffer.from(toBinary(TestDispatchSchema, dispatch)));
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
