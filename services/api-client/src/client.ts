// A typed client of the /v1 REST API (docs/rest-api.md). One method per endpoint; it never retries
// (retry.ts decides what may be repeated) and turns every answer that is not 2xx into an ApiError.

import type { FailureGroupDetail, RunComparison } from "./failures.js";
import type { TestCaseHistory } from "./health.js";
import type {
  Environment,
  ErrorBody,
  ImportResult,
  Project,
  Run,
  RunListItem,
  StartRunBody,
  TestCase,
  TestPlan,
} from "./types.js";

/** An answer of the API other than 2xx. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    /** Retry-After in seconds (429), when given. */
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(body.error || `HTTP ${status}`);
    this.name = "ApiError";
  }

  get code(): string | undefined {
    return this.body.code;
  }
}

/** No answer at all: the address is wrong, the connection failed or the answer did not come in time. */
export class NetworkError extends Error {
  constructor(
    message: string,
    /**
     * Whether the request may have reached the server. False only when the connection was never
     * made (refused, name unknown), so a POST that failed so is known not to have happened.
     */
    readonly maybeSent: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "NetworkError";
  }
}

/** An answer longer than the caller would read: the rest was not read. */
export class TooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
    this.name = "TooLarge";
  }
}

export interface ClientOptions {
  /** The gateway's address, e.g. https://testrun.example.com (TESTRUN_URL). */
  baseUrl: string;
  /** A project API key (TESTRUN_API_KEY); for importContent, a content token (TESTRUN_CONTENT_TOKEN). */
  apiKey: string;
  /** Deadline of one request, in ms (long-polls get their wait on top). Default 60 s. */
  requestTimeoutMs?: number;
  /** Sent as User-Agent. */
  userAgent?: string;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  signal?: AbortSignal;
  idempotencyKey?: string;
}

export interface Started {
  run: Run;
  /** Whether the gateway answered with the run of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** Connection errors that prove the request never left this machine. */
const notSentCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

export class TestrunClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.requestTimeoutMs ?? 60_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  getProject(options: RequestOptions = {}): Promise<Project> {
    return this.json("GET", "/v1/project", options);
  }

  async listEnvironments(options: RequestOptions = {}): Promise<Environment[]> {
    return (await this.json<{ environments: Environment[] }>("GET", "/v1/environments", options))
      .environments;
  }

  async listTestPlans(options: RequestOptions = {}): Promise<TestPlan[]> {
    return (await this.json<{ testPlans: TestPlan[] }>("GET", "/v1/test-plans", options)).testPlans;
  }

  /** Test cases, oldest first, at most 500 (`truncated` says the list was cut). */
  listTestCases(
    filter: { tags?: string[]; search?: string } = {},
    options: RequestOptions = {},
  ): Promise<{ testCases: TestCase[]; truncated: boolean }> {
    const query = new URLSearchParams();
    for (const tag of filter.tags ?? []) query.append("tag", tag);
    if (filter.search) query.set("search", filter.search);
    return this.json("GET", `/v1/test-cases${suffix(query)}`, options);
  }

  async listRuns(limit?: number, options: RequestOptions = {}): Promise<RunListItem[]> {
    const query = new URLSearchParams(limit === undefined ? {} : { limit: String(limit) });
    return (await this.json<{ runs: RunListItem[] }>("GET", `/v1/runs${suffix(query)}`, options)).runs;
  }

  /**
   * The run with its tests. With `waitSeconds` (1 to 30) the gateway answers as soon as the run is
   * finished or once that many seconds have passed (a long-poll).
   */
  getRun(id: string, waitSeconds?: number, options: RequestOptions = {}): Promise<Run> {
    const query = waitSeconds === undefined ? "" : `?wait=${waitSeconds}`;
    return this.json("GET", `/v1/runs/${encodeURIComponent(id)}${query}`, options, {
      extraTimeoutMs: (waitSeconds ?? 0) * 1000,
    });
  }

  /** POST /v1/runs: 201 with the new run. */
  async startRun(body: StartRunBody, options: RequestOptions = {}): Promise<Started> {
    const answer = await this.request("POST", "/v1/runs", options, body);
    return { run: answer.body as unknown as Run, replayed: isReplay(answer.headers) };
  }

  /** POST /v1/runs/:id/cancel: the run, ended SKIPPED with skipReason `cancelled`. */
  cancelRun(id: string, options: RequestOptions = {}): Promise<Run> {
    return this.json("POST", `/v1/runs/${encodeURIComponent(id)}/cancel`, options, { body: {} });
  }

  /** POST /v1/runs/:id/rerun: a new run of the same environment with the failed tests, or all. */
  async rerunRun(id: string, failedOnly: boolean, options: RequestOptions = {}): Promise<Started> {
    const answer = await this.request("POST", `/v1/runs/${encodeURIComponent(id)}/rerun`, options, {
      failedOnly,
    });
    return { run: answer.body as unknown as Run, replayed: isReplay(answer.headers) };
  }

  /** GET /v1/runs/:id/comparison: the run against `base`, else its base by the base rule. */
  compareRuns(id: string, base?: string, options: RequestOptions = {}): Promise<RunComparison> {
    const query = new URLSearchParams(base === undefined ? {} : { base });
    return this.json("GET", `/v1/runs/${encodeURIComponent(id)}/comparison${suffix(query)}`, options);
  }

  /** GET /v1/failure-groups/:id: the group, a page of its occurrences (newest first) and its cases. */
  getFailureGroup(
    id: string,
    page: { limit?: number; cursor?: string } = {},
    options: RequestOptions = {},
  ): Promise<FailureGroupDetail> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    if (page.cursor) query.set("cursor", page.cursor);
    return this.json("GET", `/v1/failure-groups/${encodeURIComponent(id)}${suffix(query)}`, options);
  }

  /**
   * GET /v1/test-cases/:id/history: the case's results (newest first) and its health per
   * environment; `environment` an id or a name.
   */
  getTestCaseHistory(
    id: string,
    page: { environment?: string; limit?: number; cursor?: string } = {},
    options: RequestOptions = {},
  ): Promise<TestCaseHistory> {
    const query = new URLSearchParams();
    if (page.environment) query.set("environment", page.environment);
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    if (page.cursor) query.set("cursor", page.cursor);
    return this.json("GET", `/v1/test-cases/${encodeURIComponent(id)}/history${suffix(query)}`, options);
  }

  /**
   * POST /v1/content/import: makes the project's content like the document's (docs/runs.md,
   * "Content documents"); `dryRun` only says what it would do. Needs a content token, never a key.
   */
  importContent(document: unknown, dryRun: boolean, options: RequestOptions = {}): Promise<ImportResult> {
    return this.json("POST", `/v1/content/import${dryRun ? "?dryRun=true" : ""}`, options, {
      body: document,
    });
  }

  /** GET /v1/openapi.json (needs no key). */
  openApi(options: RequestOptions = {}): Promise<Record<string, unknown>> {
    return this.json("GET", "/v1/openapi.json", options);
  }

  private async json<T>(
    method: string,
    path: string,
    options: RequestOptions,
    more: { body?: unknown; extraTimeoutMs?: number } = {},
  ): Promise<T> {
    return (await this.request(method, path, options, more.body, more.extraTimeoutMs)).body as T;
  }

  /**
   * GET /v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId}: an artifact's bytes, read as
   * they arrive. More than `maxBytes` is refused (TooLarge) without reading the rest. Fetched from
   * this client's base URL, never from the artifact's `url`, so the key goes only where
   * TESTRUN_URL points.
   */
  async getArtifact(
    ref: ArtifactRef,
    options: RequestOptions & { maxBytes: number },
  ): Promise<{ contentType: string; bytes: Uint8Array }> {
    const answer = await this.openArtifact(ref, options);
    const chunks: Uint8Array[] = [];
    for await (const chunk of answer.body(options.maxBytes)) chunks.push(chunk);
    return { contentType: answer.contentType, bytes: Buffer.concat(chunks) };
  }

  /**
   * GET of an artifact (getArtifact), once its headers came; `body` then yields its bytes as they arrive,
   * refusing more than `maxBytes` (TooLarge) and turning a connection lost midway into a
   * NetworkError. `extraTimeoutMs` adds to the request's deadline, which covers the whole body.
   */
  async openArtifact(
    ref: ArtifactRef,
    options: RequestOptions & { extraTimeoutMs?: number } = {},
  ): Promise<{ contentType: string; body: (maxBytes: number) => AsyncGenerator<Uint8Array> }> {
    const { res, timeout } = await this.send(
      "GET",
      artifactPath(ref),
      options,
      undefined,
      options.extraTimeoutMs ?? 0,
      "*/*",
    );
    async function* body(maxBytes: number): AsyncGenerator<Uint8Array> {
      const reader = res.body?.getReader();
      if (!reader) return;
      try {
        if (Number(res.headers.get("content-length") ?? 0) > maxBytes) throw new TooLarge(maxBytes);
        let total = 0;
        for (;;) {
          let next: Awaited<ReturnType<typeof reader.read>>;
          try {
            next = await reader.read();
          } catch (error) {
            if (options.signal?.aborted) throw options.signal.reason ?? error;
            throw networkError(error, timeout.aborted);
          }
          if (next.done) return;
          total += next.value.byteLength;
          if (total > maxBytes) throw new TooLarge(maxBytes);
          yield next.value;
        }
      } finally {
        // Whatever was not read is not wanted: the connection is let go.
        await reader.cancel().catch(() => undefined);
      }
    }
    return { contentType: res.headers.get("content-type") ?? "application/octet-stream", body };
  }

  /** One request; resolves with a 2xx answer, else throws ApiError or NetworkError (or the abort). */
  async request(
    method: string,
    path: string,
    options: RequestOptions = {},
    body?: unknown,
    extraTimeoutMs = 0,
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
    const { res, timeout } = await this.send(method, path, options, body, extraTimeoutMs);
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      throw networkError(error, timeout.aborted);
    }
    return { status: res.status, headers: res.headers, body: parseBody(text) };
  }

  /**
   * Sends one request and waits for its answer's headers: a 2xx answer is returned with its body
   * still to read (within the same deadline), any other is read and thrown as an ApiError.
   */
  private async send(
    method: string,
    path: string,
    options: RequestOptions,
    body: unknown,
    extraTimeoutMs: number,
    accept = "application/json",
  ): Promise<{ res: Response; timeout: AbortSignal }> {
    const timeout = AbortSignal.timeout(this.timeoutMs + extraTimeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept,
      "user-agent": this.options.userAgent ?? "testrun-cli",
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    let res: Response;
    let text = "";
    try {
      res = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        signal,
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      if (!res.ok) text = await res.text();
    } catch (error) {
      // The caller's own abort (a signal to stop) is not a network failure.
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      throw networkError(error, timeout.aborted);
    }
    if (res.ok) return { res, timeout };
    const parsed = parseBody(text);
    const retryAfter = Number(res.headers.get("retry-after"));
    throw new ApiError(
      res.status,
      {
        ...parsed,
        error: typeof parsed.error === "string" ? parsed.error : `HTTP ${res.status}`,
      } as ErrorBody,
      Number.isFinite(retryAfter) && retryAfter >= 0 && res.headers.has("retry-after")
        ? retryAfter
        : undefined,
    );
  }
}

const suffix = (query: URLSearchParams) => (query.size ? `?${query}` : "");

/** The gateway marks an idempotent replay with a header; any of the usual names counts. */
const isReplay = (headers: Headers) =>
  ["idempotent-replayed", "idempotency-replayed", "x-idempotent-replayed"].some(
    (name) => headers.get(name)?.toLowerCase() === "true",
  );

/** A JSON object, or (a proxy's HTML page, say) an object whose error is the text's beginning. */
function parseBody(text: string): Record<string, unknown> {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { error: text.replace(/\s+/g, " ").trim().slice(0, 200) };
}

function networkError(error: unknown, timedOut: boolean): NetworkError {
  if (timedOut) return new NetworkError("no answer in time", true, { cause: error });
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? "";
  const message = cause?.message ?? (error as Error).message ?? String(error);
  return new NetworkError(message, !notSentCodes.has(code), { cause: error });
}

/** What names an artifact in the API: its id, its test result's and its run's. */
export interface ArtifactRef {
  runId: string;
  testResultId: string;
  id: string;
}

/** The path of an artifact's bytes: /v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId}. */
export const artifactPath = ({ runId, testResultId, id }: ArtifactRef): string =>
  `/v1/runs/${encodeURIComponent(runId)}/tests/${encodeURIComponent(testResultId)}/artifacts/${encodeURIComponent(id)}`;
