// The executors' side of the test stream (contract in @testrun/kit dispatch.ts): one consumer
// group, new entries read with XREADGROUP, entries of a dead consumer taken over with XAUTOCLAIM.
import type { TestDispatch } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { decodeDispatch, executorGroup, testStream } from "@testrun/kit";
import type { Redis } from "ioredis";

export interface QueueEntry {
  id: string;
  /** Undefined when the entry is malformed: acknowledge it and move on. */
  dispatch: TestDispatch | undefined;
}

const isNoGroup = (error: unknown) => error instanceof Error && error.message.startsWith("NOGROUP");
/** A blocked read whose stream was deleted meanwhile (FLUSHALL) is answered with this error. */
const isUnblocked = (error: unknown) => error instanceof Error && error.message.startsWith("UNBLOCKED");

export class TestQueue {
  /**
   * @param reader a connection of its own: a blocking read holds its connection, and acks sent on
   *   the same one would wait behind it
   * @param commands the connection for everything else
   */
  constructor(
    private readonly reader: Redis,
    private readonly commands: Redis,
    private readonly consumer: string,
  ) {}

  /**
   * Creates the group (and the stream) if missing. From "0": tests published before any executor
   * started are read too.
   */
  async ensureGroup(): Promise<void> {
    try {
      await this.commands.call("XGROUP", "CREATE", testStream, executorGroup, "0", "MKSTREAM");
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith("BUSYGROUP"))) throw error;
    }
  }

  /** Waits up to `blockMs` for at most `count` new entries. */
  read(count: number, blockMs: number): Promise<QueueEntry[]> {
    return this.#withGroup(async () => {
      const reply = (await this.reader
        .callBuffer(
          "XREADGROUP",
          "GROUP",
          executorGroup,
          this.consumer,
          "COUNT",
          count,
          "BLOCK",
          blockMs,
          "STREAMS",
          testStream,
          ">",
        )
        .catch((error: unknown) => {
          if (isUnblocked(error)) return null;
          throw error;
        })) as StreamsReply | null;
      return entriesOf(reply).map(toEntry);
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
      let cursor = "0-0";
      do {
        const [next, claimed] = (await this.commands.callBuffer(
          "XAUTOCLAIM",
          testStream,
          executorGroup,
          this.consumer,
          minIdleMs,
          cursor,
          "COUNT",
          count - entries.length,
        )) as [Buffer, ([Buffer, Buffer[] | null] | null)[]];
        cursor = next.toString();
        // Entries deleted from the stream meanwhile come back without fields (or as nil).
        for (const entry of claimed) if (entry?.[1]) entries.push(toEntry(entry as [Buffer, Buffer[]]));
      } while (cursor !== "0-0" && entries.length < count);
      return entries;
    });
  }

  /** Resets an entry's idle time, so a live test is not taken over while its executor works on it. */
  async touch(id: string): Promise<void> {
    await this.commands.call("XCLAIM", testStream, executorGroup, this.consumer, 0, id, "JUSTID");
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
    const results = await this.commands
      .multi()
      .call("XACK", testStream, executorGroup, id)
      .call("XDEL", testStream, id)
      .exec();
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
  }

  /** Runs a group command, recreating the group once when the stream or group vanished (FLUSHALL). */
  async #withGroup<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      if (!isNoGroup(error)) throw error;
      await this.ensureGroup();
      return command();
    }
  }
}

function toEntry([id, fields]: [Buffer, Buffer[]]): QueueEntry {
  return { id: id.toString(), dispatch: decodeDispatch(fields) };
}

type StreamEntries = [Buffer, Buffer[]][];
/** XREADGROUP's reply: pairs of stream and entries (RESP2), or one flat stream-entries map (RESP3). */
type StreamsReply = [Buffer, StreamEntries][] | [Buffer, StreamEntries];

/** The entries of the one stream read, whichever protocol version the connection speaks. */
function entriesOf(reply: StreamsReply | null): StreamEntries {
  if (!reply || reply.length === 0) return [];
  if (Buffer.isBuffer(reply[0])) return (reply[1] as StreamEntries | undefined) ?? [];
  return (reply as [Buffer, StreamEntries][])[0]?.[1] ?? [];
}
