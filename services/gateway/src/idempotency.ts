import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * Idempotency-Key on POST /v1/runs and POST /v1/runs/{id}/rerun (docs/rest-api.md, "Safe
 * retries"): the same key with the same request within 24 hours answers with the run the first
 * request started; with another request, 422.
 *
 * Kept in Redis, not PostgreSQL: the gateway owns no database (every schema belongs to the service
 * whose data it is), Redis already holds what all replicas share (rate limits, the key cache,
 * the runs' test queue, which the deployment keeps durable), and a record lives 24 hours, which
 * an expiry does without a cleanup job. Losing Redis loses the records, and a retry after that
 * starts a second run, as it would without the header.
 *
 * A record is per API key (another key's same Idempotency-Key is unrelated) and names neither:
 * its Redis key holds the API key's id and a hash of the Idempotency-Key, its value a hash of the
 * request and, once started, the run's id. Nothing of it is logged.
 *
 * While the first request is being answered its record is `pending` (for at most `pendingMs`, so
 * a replica that died mid-start does not block the key for a day); a concurrent duplicate waits
 * for it to end, then answers with its run (or, when it failed without starting one, tries itself).
 */

/** How long a started run is remembered for its Idempotency-Key. */
const rememberSeconds = 24 * 60 * 60;

interface IdempotencyRecord {
  /** Hash of the request (operation, run, body). */
  request: string;
  /** The run it started, once it did. */
  runId?: string;
}

export type Claim =
  /** The first request with this key: start, then `started` or `failed`. */
  | { kind: "first" }
  /** Answered before (or meanwhile): answer with this run. */
  | { kind: "replay"; runId: string }
  /** Used with another request. */
  | { kind: "reused" }
  /** Another request with this key is still being answered and did not end within the wait. */
  | { kind: "in_use" };

const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url");

/** JSON with object keys in sorted order: the same body however its client ordered it. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What makes two requests the same: the operation, the run it acts on (rerun) and the body. */
export const requestHash = (operation: string, body: unknown): string =>
  sha256(`${operation}\n${canonical(body ?? {})}`);

export class IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    /** How long a first request may take: its record is pending at most this long. */
    private readonly pendingMs: number,
    private readonly pollMs = 100,
  ) {}

  private recordKey(apiKeyId: string, idempotencyKey: string): string {
    return `testrun:gateway:idempotency:${apiKeyId}:${sha256(idempotencyKey)}`;
  }

  /** Claims the key for this request, or says how the earlier request with it ended. */
  async claim(apiKeyId: string, idempotencyKey: string, request: string): Promise<Claim> {
    const key = this.recordKey(apiKeyId, idempotencyKey);
    const pending = JSON.stringify({ request } satisfies IdempotencyRecord);
    const giveUpAt = Date.now() + this.pendingMs;
    for (;;) {
      if (await this.redis.set(key, pending, "PX", this.pendingMs, "NX")) return { kind: "first" };
      const raw = await this.redis.get(key);
      if (raw !== null) {
        const record = JSON.parse(raw) as IdempotencyRecord;
        if (record.request !== request) return { kind: "reused" };
        if (record.runId) return { kind: "replay", runId: record.runId };
      }
      // The first request is still being answered (or its record just went): look again shortly.
      if (Date.now() >= giveUpAt) return { kind: "in_use" };
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
  }

  /** The first request started this run: later ones with the key answer with it for 24 hours. */
  async started(apiKeyId: string, idempotencyKey: string, request: string, runId: string): Promise<void> {
    const record: IdempotencyRecord = { request, runId };
    await this.redis.set(
      this.recordKey(apiKeyId, idempotencyKey),
      JSON.stringify(record),
      "EX",
      rememberSeconds,
    );
  }

  /** The first request started nothing: the key is free again, so a retry may try. */
  async failed(apiKeyId: string, idempotencyKey: string): Promise<void> {
    await this.redis.del(this.recordKey(apiKeyId, idempotencyKey));
  }
}
