// Starting a run without ever starting two (docs/pipelines.md, "It never starts a run twice").
//
// - A 500 that carries an `id` means the run was started but not read back: it is followed, and
//   nothing is posted again (the contract, rest-api.md "Runs").
// - A 429 was refused before anything happened: it is repeated after its Retry-After.
// - A request that never left this machine (connection refused, unknown host) is repeated.
// - Any other failure without an answer (a reset, a timeout, a proxy's 502) may or may not have
//   started the run. Every POST carries an Idempotency-Key chosen once per invocation, so a gateway
//   that honours the header answers a repeat with the first run; the POST is repeated only when the
//   gateway says (in GET /v1/openapi.json) that it honours it.
import { randomUUID } from "node:crypto";
import { ApiError, NetworkError, type Started, type TestrunClient } from "./client.js";
import { withRetries } from "./retry.js";
import type { Run } from "./types.js";

/** A run that was started: answered 201, or a 500 naming it (then only id and url are known). */
export type StartOutcome =
  | { kind: "started"; run: Run; replayed: boolean }
  | { kind: "follow"; id: string; url: string };

export interface StartOptions {
  /** How long failures may go on before giving up. Default 30 s. */
  outageMs?: number;
  onRetry?: (reason: string, delayMs: number) => void;
  /** The Idempotency-Key; a fresh one per invocation unless given. */
  idempotencyKey?: string;
}

/** The started run of a failure, when the failure is a 500 naming it. */
export function startedRunOf(error: unknown): { id: string; url: string } | undefined {
  if (!(error instanceof ApiError) || error.status !== 500) return undefined;
  const { id, url } = error.body;
  return typeof id === "string" && id ? { id, url: typeof url === "string" ? url : "" } : undefined;
}

/** Sends `post` (POST /v1/runs or a rerun) with an Idempotency-Key, repeating it only when safe. */
export async function startSafely(
  client: TestrunClient,
  post: (idempotencyKey: string) => Promise<Started>,
  options: StartOptions = {},
): Promise<StartOutcome> {
  const idempotencyKey = options.idempotencyKey ?? randomUUID();
  let honoursKey: boolean | undefined;
  const attempt = async () => {
    try {
      return await post(idempotencyKey);
    } catch (error) {
      if (ambiguous(error) && honoursKey === undefined) honoursKey = await honoursIdempotencyKey(client);
      throw error;
    }
  };
  const isRetryable = (error: unknown) => {
    if (startedRunOf(error)) return { retry: false };
    if (error instanceof ApiError && error.status === 429)
      return { retry: true, afterMs: (error.retryAfterSeconds ?? 1) * 1000 };
    if (error instanceof NetworkError && !error.maybeSent) return { retry: true };
    return { retry: ambiguous(error) && honoursKey === true };
  };
  try {
    const { run, replayed } = await withRetries(
      attempt,
      { outageMs: options.outageMs ?? 30_000, ...(options.onRetry && { onRetry: options.onRetry }) },
      isRetryable,
    );
    return { kind: "started", run, replayed };
  } catch (error) {
    const started = startedRunOf(error);
    if (started) return { kind: "follow", ...started };
    if (ambiguous(error) && honoursKey !== true) throw new MaybeStarted(error);
    throw error;
  }
}

/** No answer, or a server error that does not say whether the run started. */
function ambiguous(error: unknown): boolean {
  if (error instanceof NetworkError) return error.maybeSent;
  return error instanceof ApiError && error.status >= 500 && error.status !== 501 && !startedRunOf(error);
}

/** The POST failed in a way that does not say whether a run was started, and cannot be repeated. */
export class MaybeStarted extends Error {
  constructor(readonly last: unknown) {
    super(
      "the start request failed without a clear answer, and this gateway does not take an Idempotency-Key, so it was not repeated: a run may have started (see `testrun list runs`)",
      { cause: last },
    );
    this.name = "MaybeStarted";
  }
}

/**
 * Whether the gateway's OpenAPI document declares the Idempotency-Key header as a parameter (of
 * POST /v1/runs, or anywhere: a gateway honours it wherever it declares it). Prose that merely
 * mentions the header does not count.
 */
async function honoursIdempotencyKey(client: TestrunClient): Promise<boolean> {
  try {
    return declaresHeader(await client.openApi(), "idempotency-key");
  } catch {
    return false;
  }
}

function declaresHeader(node: unknown, header: string): boolean {
  if (Array.isArray(node)) return node.some((item) => declaresHeader(item, header));
  if (!node || typeof node !== "object") return false;
  const record = node as Record<string, unknown>;
  if (record.in === "header" && typeof record.name === "string" && record.name.toLowerCase() === header)
    return true;
  return Object.values(record).some((value) => declaresHeader(value, header));
}
