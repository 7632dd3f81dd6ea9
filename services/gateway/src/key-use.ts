import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { type KeysService, KeyUseSchema } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { type BackgroundLoop, type Logger, startLoop } from "@testrun/kit";

/** Most uses one RecordKeyUse call may carry (keys.proto). */
const maxUsesPerCall = 1_000;

/**
 * Remembers the latest use of each key verified from the cache and reports them to the keys
 * service in batches, once a minute, so `last used` stays right (to within a minute, as the
 * contract allows) without a call to the keys service per request. A key is reported at most once
 * per flush. Uses verified by VerifyKey are not noted: that call records them itself.
 */
export class KeyUseRecorder {
  private pending = new Map<string, Date>();
  private loop: BackgroundLoop | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly keys: Pick<Client<typeof KeysService>, "recordKeyUse">,
    private readonly logger: Logger,
    private readonly intervalMs = 60_000,
  ) {}

  note(keyId: string, at = new Date()): void {
    const previous = this.pending.get(keyId);
    if (!previous || previous < at) this.pending.set(keyId, at);
  }

  start(): void {
    const { intervalMs, logger } = this;
    // The loop's timers are unref'd: reporting uses never keeps a stopping process alive.
    const pass = () => this.flush();
    this.loop ??= startLoop({ name: "key use", intervalMs, firstAfterMs: intervalMs, pass, logger });
  }

  /** Stops the loop and reports what is pending (the last flush, at shutdown). */
  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
    await this.flush();
  }

  /** Reports every pending use; failed batches stay pending for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.send());
    return this.flushing;
  }

  private async send(): Promise<void> {
    if (this.pending.size === 0) return;
    const uses = [...this.pending];
    this.pending = new Map();
    for (let start = 0; start < uses.length; start += maxUsesPerCall) {
      const batch = uses.slice(start, start + maxUsesPerCall);
      try {
        await this.keys.recordKeyUse({
          uses: batch.map(([keyId, usedAt]) =>
            create(KeyUseSchema, { keyId, usedAt: timestampFromDate(usedAt) }),
          ),
        });
      } catch (err) {
        this.logger.warn({ err, keys: batch.length }, "could not record key use; will retry");
        for (const [keyId, usedAt] of batch) this.note(keyId, usedAt);
      }
    }
  }
}
