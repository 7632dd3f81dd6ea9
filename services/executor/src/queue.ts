// The executors' side of the test streams (contract in @testrun/kit dispatch.ts): one consumer
// group per stream, new entries read with XREADGROUP, entries of a dead consumer taken over with
// XAUTOCLAIM. An executor reads the streams of the kinds of test it takes (EXECUTOR_STEP_KINDS):
// an HTTP-only pool never sees a browser test; and of those, only the kinds it can run now
// (kinds.ts): one whose browser does not start leaves browser tests to others.
import type { TestDispatch } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { decodeDispatch, executorGroup, type TestKind, testKinds, testStreams } from "@testrun/kit";
import type { Redis } from "ioredis";

export interface QueueEntry {
  /**
   * The entry's handle, `<kind>:<stream entry id>` (e.g. `browser:1764000000000-0`): what touch
   * and ack take, since entries of two streams may share an id.
   */
  id: string;
  /** Undefined when the entry is malformed: acknowledge it and move on. */
  dispatch: TestDispatch | undefined;
}

const isNoGroup = (error: unknown) => error instanceof Error && error.message.startsWith("NOGROUP");
/** A blocked read whose stream was deleted meanwhile (FLUSHALL) is answered with this error. */
const isUnblocked = (error: unknown) => error instanceof Error && error.message.startsWith("UNBLOCKED");

export class TestQueue {
  /** The streams read, in the order the kinds were given. */
  readonly #streams: { kind: TestKind; stream: string }[];
  /**
   * Entries read beyond what the last read asked for (only when fewer were asked for than streams
   * are read, and several streams answered at once): the next read hands them out first. They stay
   * pending in the group meanwhile, so if this process dies they are taken over like any other.
   */
  readonly #held: QueueEntry[] = [];

  /**
   * @param reader a connection of its own: a blocking read holds its connection, and acks sent on
   *   the same one would wait behind it
   * @param commands the connection for everything else
   * @param kinds the kinds of test this executor takes (default: every kind)
   * @param takes whether it takes a kind now (default: always): the streams of the others are not
   *   read, and what was read of them meanwhile is left pending, for whoever takes it over
   */
  constructor(
    private readonly reader: Redis,
    private readonly commands: Redis,
    private readonly consumer: string,
    kinds: readonly TestKind[] = testKinds,
    private readonly takes: (kind: TestKind) => boolean = () => true,
  ) {
    if (kinds.length === 0) throw new Error("an executor must take at least one kind of test");
    this.#streams = [...new Set(kinds)].map((kind) => ({ kind, stream: testStreams[kind] }));
  }

  /**
   * Creates the groups (and the streams) if missing. From "0": tests published before any executor
   * started are read too.
   */
  async ensureGroup(): Promise<void> {
    for (const { stream } of this.#streams) {
      try {
        await this.commands.call("XGROUP", "CREATE", stream, executorGroup, "0", "MKSTREAM");
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith("BUSYGROUP"))) throw error;
      }
    }
  }

  /**
   * Waits up to `blockMs` for at most `count` new entries. With several streams, each gives at most
   * its share of `count` (at least one), so one kind's backlog cannot take every free slot while
   * another kind's tests wait.
   */
  read(count: number, blockMs: number): Promise<QueueEntry[]> {
    // Held entries of a kind no longer taken stay pending in the group (taken over once idle).
    this.#held.splice(0, this.#held.length, ...this.#held.filter((entry) => this.takes(kindOf(entry.id))));
    if (this.#held.length > 0) return Promise.resolve(this.#held.splice(0, count));
    const streams = this.#streams.filter(({ kind }) => this.takes(kind));
    if (streams.length === 0) return Promise.resolve([]);
    // Rounded down: slots left free when only some streams have a backlog are filled by the next
    // read, at once (the executor reads while it has free slots), and little is held unread.
    const perStream = Math.max(1, Math.floor(count / streams.length));
    return this.#withGroup(async () => {
      const reply = (await this.reader
        .callBuffer(
          "XREADGROUP",
          "GROUP",
          executorGroup,
          this.consumer,
          "COUNT",
          perStream,
          "BLOCK",
          blockMs,
          "STREAMS",
          ...streams.map((s) => s.stream),
          ...streams.map(() => ">"),
        )
        .catch((error: unknown) => {
          if (isUnblocked(error)) return null;
          throw error;
        })) as StreamsReply | null;
      // A kind no longer taken since the read began (its browser stopped starting): its entries
      // stay pending, like those of a dead executor, for an executor that takes the kind.
      const entries = streamsOf(reply).flatMap(([stream, streamEntries]) => {
        const kind = this.#kindOf(stream.toString());
        return this.takes(kind) ? streamEntries.map((entry) => this.#toEntry(kind, entry)) : [];
      });
      this.#held.push(...entries.splice(count));
      return entries;
    });
  }

  /**
   * Takes over at most `count` entries that another consumer (or this one, before a restart) read
   * but did not acknowledge for longer than `minIdleMs`: its executor is presumed dead. Whether the
   * test may really run again is the runs service's decision (ClaimTest).
   */
  takeOver(count: number, minIdleMs: number): Promise<QueueEntry[]> {
    return this.#withGroup(async () => {
      const entries: QueueEntry[] = [];
      for (const { kind, stream } of this.#streams) {
        if (!this.takes(kind)) continue;
        let cursor = "0-0";
        do {
          if (entries.length >= count) return entries;
          const [next, claimed] = (await this.commands.callBuffer(
            "XAUTOCLAIM",
            stream,
            executorGroup,
            this.consumer,
            minIdleMs,
            cursor,
            "COUNT",
            count - entries.length,
          )) as [Buffer, ([Buffer, Buffer[] | null] | null)[]];
          cursor = next.toString();
          // Entries deleted from the stream meanwhile come back without fields (or as nil).
          for (const entry of claimed)
            if (entry?.[1]) entries.push(this.#toEntry(kind, entry as [Buffer, Buffer[]]));
        } while (cursor !== "0-0");
      }
      return entries;
    });
  }

  /** Resets an entry's idle time, so a live test is not taken over while its executor works on it. */
  async touch(id: string): Promise<void> {
    await this.touchAll([id]);
  }

  /** touch for several entries: one XCLAIM per stream (in one round trip), whatever their number. */
  async touchAll(ids: readonly string[]): Promise<void> {
    const byStream = new Map<string, string[]>();
    for (const id of ids) {
      const { stream, entryId } = this.#locate(id);
      byStream.set(stream, [...(byStream.get(stream) ?? []), entryId]);
    }
    if (byStream.size === 0) return;
    const pipeline = this.commands.pipeline();
    for (const [stream, entryIds] of byStream)
      pipeline.call("XCLAIM", stream, executorGroup, this.consumer, 0, ...entryIds, "JUSTID");
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
  }

  /** Ends a blocking read at once (it rejects) and closes the reading connection. */
  closeReader(): void {
    this.reader.disconnect();
  }

  /**
   * Acknowledges an entry and deletes it: the group is the stream's only reader, so a handled entry
   * is of no use to anyone, and the stream holds only outstanding work instead of growing for ever.
   */
  async ack(id: string): Promise<void> {
    const { stream, entryId } = this.#locate(id);
    const results = await this.commands
      .multi()
      .call("XACK", stream, executorGroup, entryId)
      .call("XDEL", stream, entryId)
      .exec();
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
  }

  /** Runs a group command, recreating the groups once when a stream or group vanished (FLUSHALL). */
  async #withGroup<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      if (!isNoGroup(error)) throw error;
      await this.ensureGroup();
      return command();
    }
  }

  #toEntry(kind: TestKind, [id, fields]: [Buffer, Buffer[]]): QueueEntry {
    return { id: `${kind}:${id.toString()}`, dispatch: decodeDispatch(fields) };
  }

  #kindOf(stream: string): TestKind {
    const found = this.#streams.find((candidate) => candidate.stream === stream);
    if (!found) throw new Error(`XREADGROUP answered for a stream not read: ${stream}`);
    return found.kind;
  }

  /** The stream and stream entry id of a handle made by #toEntry. */
  #locate(id: string): { stream: string; entryId: string } {
    return { stream: testStreams[kindOf(id)], entryId: id.slice(id.indexOf(":") + 1) };
  }
}

/** The kind of a handle made by #toEntry (`browser:1764000000000-0`). */
function kindOf(id: string): TestKind {
  const colon = id.indexOf(":");
  const kind = id.slice(0, colon) as TestKind;
  if (colon < 0 || !testKinds.includes(kind)) throw new Error(`not a queue entry handle: ${id}`);
  return kind;
}

type StreamEntries = [Buffer, Buffer[]][];
/**
 * XREADGROUP's reply: pairs of stream and entries (RESP2), or one flat map of streams and their
 * entries (RESP3: stream, entries, stream, entries, …).
 */
type StreamsReply = [Buffer, StreamEntries][] | (Buffer | StreamEntries)[];

/** Each stream read with its entries, whichever protocol version the connection speaks. */
function streamsOf(reply: StreamsReply | null): [Buffer, StreamEntries][] {
  if (!reply || reply.length === 0) return [];
  if (!Buffer.isBuffer(reply[0])) return reply as [Buffer, StreamEntries][];
  const pairs: [Buffer, StreamEntries][] = [];
  for (let i = 0; i + 1 < reply.length; i += 2)
    pairs.push([reply[i] as Buffer, (reply[i + 1] as StreamEntries | undefined) ?? []]);
  return pairs;
}
