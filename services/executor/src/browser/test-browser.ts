// The browser of one test: a context of its own from the pool, opened at the test's first browser
// step and closed when the test ends, with a Playwright trace recorded from the start (kept when
// the test fails or asks for it), the page's console errors and failed requests, and the
// screenshots its steps took. What it hands back is redacted (docs/runs.md, "Browser steps").
import { randomUUID } from "node:crypto";
import { readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { StepFailure, type Variables } from "../steps/variables.js";
import { clip, own, say, sizeText } from "../steps/wording.js";
import {
  type Artifact,
  ArtifactKind,
  maxLogEntries,
  maxLogTextLength,
  maxLogUrlLength,
  maxScreenshotBytes,
  maxScreenshotBytesPerTest,
} from "./artifacts.js";
import { maskedScreenshot } from "./mask.js";
import { BrowserLost, type BrowserPool, type PooledContext } from "./pool.js";
import { redactTrace, type TraceLimits, TraceTooLarge } from "./trace-redaction.js";

/** How long the screenshot taken when a test fails may take. */
const failureScreenshotTimeoutMs = 5_000;
/** How long stopping the trace may take before the test's artifacts are given up. */
const traceStopTimeoutMs = 30_000;

/** One line of the browser log (the BROWSER_LOG artifact). */
export interface LogEntry {
  /** Milliseconds since the test's page opened. */
  at: number;
  /** A console error, an uncaught error of the page, a request that got no response, a 4xx/5xx, or the executor's note. */
  kind: "console" | "page_error" | "request_failed" | "response" | "executor";
  text?: string;
  method?: string;
  url?: string;
  status?: number;
}

interface Session {
  pooled: PooledContext;
  page: Page;
  openedAt: number;
}

/** How a test ended, for what its browser keeps. */
export interface TestEnd {
  /** The failed step's number; 0 when the test passed. */
  failedStep: number;
  /** Keep the trace (and the log) even though the test passed: TestAssignment.record_trace. */
  recordTrace: boolean;
}

export class TestBrowser {
  readonly #pool: BrowserPool;
  readonly #vars: Variables;
  readonly #traceLimits: TraceLimits;
  readonly #project: string | undefined;
  #session: Promise<Session> | undefined;
  #disconnected = false;
  #browser: Browser | undefined;
  readonly #screenshots: Artifact[] = [];
  #screenshotBytes = 0;
  readonly #log: LogEntry[] = [];
  #omitted = 0;

  /** `project`: whose test this is; its browser runs no other project's test meanwhile. */
  constructor(pool: BrowserPool, vars: Variables, traceLimits: TraceLimits, project?: string) {
    this.#pool = pool;
    this.#project = project;
    this.#vars = vars;
    this.#traceLimits = traceLimits;
  }

  /**
   * The test's page, opened at its first browser step: waits for a context of the pool until
   * `signal` aborts (the test's deadline), not under the step's own timeout.
   */
  async page(signal: AbortSignal): Promise<Page> {
    this.#session ??= this.#open(signal);
    return (await this.#session).page;
  }

  /** Whether the browser crashed or disconnected while this test had a context in it. */
  get lost(): boolean {
    return this.#disconnected || this.#browser?.isConnected() === false;
  }

  async #open(signal: AbortSignal): Promise<Session> {
    const pooled = await this.#pool.openContext(signal, this.#project);
    this.#browser = pooled.browser;
    pooled.browser.once("disconnected", () => {
      this.#disconnected = true;
    });
    try {
      // From the start: whether the trace is kept is known only at the end. Without screencast
      // frames: a frame is a picture of the page that no redaction reaches (docs/security.md).
      await pooled.context.tracing.start({ screenshots: false, snapshots: true });
      const page = await pooled.context.newPage();
      const session = { pooled, page, openedAt: performance.now() };
      this.#listen(session);
      return session;
    } catch (error) {
      await pooled.close();
      if (!pooled.browser.isConnected()) throw new BrowserLost();
      throw error;
    }
  }

  #listen({ page, openedAt }: Session): void {
    const add = (entry: Omit<LogEntry, "at">) => {
      if (this.#log.length >= maxLogEntries) {
        this.#omitted++;
        return;
      }
      // Cut generously here (memory), exactly once redacted: a cut could leave part of a value
      // that redaction no longer recognises, and the final cut removes that part again.
      const cut = (text: string | undefined, max: number) => text?.slice(0, max * 4);
      this.#log.push({
        at: Math.round(performance.now() - openedAt),
        ...entry,
        text: cut(entry.text, maxLogTextLength),
        url: cut(entry.url, maxLogUrlLength),
      });
    };
    page.on("console", (message) => {
      if (message.type() === "error")
        add({ kind: "console", text: message.text(), url: message.location().url || undefined });
    });
    page.on("pageerror", (error) => add({ kind: "page_error", text: error.message }));
    page.on("requestfailed", (request) =>
      add({
        kind: "request_failed",
        method: request.method(),
        url: request.url(),
        text: request.failure()?.errorText,
      }),
    );
    page.on("response", (response) => {
      if (response.status() >= 400)
        add({
          kind: "response",
          method: response.request().method(),
          url: response.url(),
          status: response.status(),
        });
    });
  }

  #note(text: string): void {
    this.#log.push({ at: 0, kind: "executor", text });
  }

  /**
   * Keeps a screenshot of a screenshot step (or of the failure). Past a bound, a screenshot step
   * fails saying which; the failure screenshot is left out with a note in the log.
   */
  keepScreenshot(name: string, step: number, png: Uint8Array): void {
    const problem =
      png.byteLength > maxScreenshotBytes
        ? say`the screenshot is larger than ${own(sizeText(maxScreenshotBytes))}`
        : this.#screenshotBytes + png.byteLength > maxScreenshotBytesPerTest
          ? say`the test's screenshots would exceed ${own(sizeText(maxScreenshotBytesPerTest))}`
          : undefined;
    if (problem) throw new StepFailure(problem);
    this.#screenshotBytes += png.byteLength;
    this.#screenshots.push({
      kind: ArtifactKind.SCREENSHOT,
      name,
      contentType: "image/png",
      content: png,
      step,
    });
  }

  /**
   * Ends the test's browser: closes its context and returns what it keeps: the screenshots, a
   * "failure" screenshot when the test failed, the trace and the log when it failed or
   * `recordTrace`. With no `end` (the test was stopped, the browser lost), nothing is kept.
   */
  async finish(end: TestEnd | undefined): Promise<Artifact[]> {
    const session = await this.#session?.catch(() => undefined);
    if (!session) return [];
    try {
      if (!end || this.lost) return [];
      return await this.#collect(session, end);
    } finally {
      await session.pooled.close();
    }
  }

  async #collect({ page, pooled }: Session, { failedStep, recordTrace }: TestEnd): Promise<Artifact[]> {
    const failed = failedStep > 0;
    if (failed) {
      try {
        const png = await maskedScreenshot(page, this.#vars, { timeout: failureScreenshotTimeoutMs });
        this.keepScreenshot("failure", failedStep, png);
      } catch (error) {
        this.#note(
          `no failure screenshot: ${error instanceof StepFailure ? error.message : "the page did not answer"}`,
        );
      }
    }
    const keep = failed || recordTrace;
    const artifacts = [...this.#screenshots];
    const trace = await this.#stopTrace(pooled, keep);
    if (trace) artifacts.push(trace);
    if (keep && this.#log.length > 0) artifacts.push(this.#logArtifact());
    return artifacts;
  }

  async #stopTrace({ context }: PooledContext, keep: boolean): Promise<Artifact | undefined> {
    const path = keep ? join(tmpdir(), `testrun-trace-${randomUUID()}.zip`) : undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const stopped = context.tracing.stop(path ? { path } : {});
      const gaveUp = new Promise<"gave up">((resolve) => {
        timer = setTimeout(() => resolve("gave up"), traceStopTimeoutMs);
      });
      if ((await Promise.race([stopped, gaveUp])) === "gave up") {
        stopped.catch(() => {});
        this.#note("no trace: the browser did not hand it over in time");
        return undefined;
      }
      if (!path) return undefined;
      const { size } = await stat(path);
      if (size > this.#traceLimits.maxZipBytes)
        throw new TraceTooLarge(`the trace is larger than ${sizeText(this.#traceLimits.maxZipBytes)}`);
      const content = await redactTrace(await readFile(path), this.#vars, this.#traceLimits);
      return { kind: ArtifactKind.TRACE, name: "trace", contentType: "application/zip", content, step: 0 };
    } catch (error) {
      if (error instanceof TraceTooLarge) this.#note(`no trace: ${error.message} (BROWSER_TRACE_MAX_BYTES)`);
      else if (keep) this.#note("no trace: the browser could not write it");
      return undefined;
    } finally {
      clearTimeout(timer);
      if (path) await rm(path, { force: true });
    }
  }

  #logArtifact(): Artifact {
    const cut = (text: string | undefined, max: number) => (text === undefined ? undefined : clip(text, max));
    const entries = this.#log.map((entry) => {
      const redacted = this.#vars.redactValue(entry) as LogEntry;
      return {
        ...redacted,
        text: cut(redacted.text, maxLogTextLength),
        url: cut(redacted.url, maxLogUrlLength),
      };
    });
    const content = Buffer.from(JSON.stringify({ entries, omitted: this.#omitted }), "utf8");
    return {
      kind: ArtifactKind.BROWSER_LOG,
      name: "browser-log",
      contentType: "application/json",
      content,
      step: 0,
    };
  }
}
