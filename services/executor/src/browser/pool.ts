// The executor's browsers and their contexts. Each test gets a browser context of its own (no
// cookie, storage or cache shared with another test), at most `contexts` at a time; and a browser
// process serves one project at a time (docs/security.md, "The browser's sandbox"): a test of a
// project runs in that project's browser, or in a free one (launched for it, or an idle one of
// another project closed first), never beside another project's test. At most `browsers` processes
// at once. A browser is launched at start by an executor that takes browser tests (`launch`,
// browser/probe.ts: the check that it can run them; one that takes only HTTP tests never starts
// one), and again when a test needs one after it crashed or disconnected. Chromium runs with its
// own sandbox on (browser/sandbox.ts) unless BROWSER_SANDBOX=off.
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { browserCauses, type Logger } from "@testrun/kit";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type LaunchOptions,
} from "playwright-core";
import { defaultSandbox, type PreparedSandbox, prepareSandbox, type SandboxSettings } from "./sandbox.js";

/**
 * Flags every launch gets: no background networking or component updates, so the browser talks
 * only to the pages a test opens. Never --no-sandbox here: that is BROWSER_SANDBOX=off's alone.
 */
export const baseChromiumArgs = ["--disable-background-networking", "--disable-component-update"];

export interface BrowserPoolOptions {
  /** The Chromium binary (CHROMIUM_PATH; Debian's /usr/bin/chromium). */
  executablePath: string;
  /** Browser contexts, hence browser tests, open at once in this process (BROWSER_CONTEXTS). */
  contexts: number;
  /**
   * Browser processes at once (BROWSER_PROCESSES; default `contexts`): as many projects' tests
   * run at once. Fewer than `contexts` saves memory when tests of one project share a browser,
   * but a test of another project then waits until a browser is idle.
   */
  browsers?: number;
  /** Chromium's sandbox (BROWSER_SANDBOX, BROWSER_UID, BROWSER_GID; default on, as 65534). */
  sandbox?: SandboxSettings;
  /**
   * The forward proxy every page's traffic goes through (the executor's egress proxy, which connects
   * through the EgressGuard). Playwright adds `<-loopback>` to the bypass list, so loopback is
   * proxied too.
   */
  proxy?: LaunchOptions["proxy"];
  /**
   * More launch options (chromium-flags.ts); their `args` are added to baseChromiumArgs. The
   * sandbox's (chromiumSandbox, env) are the pool's own.
   */
  launchOptions?: Omit<LaunchOptions, "executablePath" | "proxy" | "chromiumSandbox" | "env">;
  /** Options of every context (chromium-flags.ts: downloads refused, …). */
  contextOptions?: BrowserContextOptions;
  logger?: Logger;
}

/**
 * The browser could not be started (a wrong CHROMIUM_PATH, a missing library, no memory): not the
 * test's fault. Its message says why in words a user may read (no path); `cause` is the launch's
 * own error, for the operator's log.
 */
export class BrowserUnavailable extends Error {
  override name = "BrowserUnavailable";
}

/** How long one launch may take before it counts as failed (Playwright's own default is 3 minutes). */
export const launchTimeoutMs = 30_000;

/**
 * Why a launch failed, from Playwright's error, in one line without the path or the command line
 * (which the error holds, with chromium's own output): what a test's summary may say.
 */
export function launchFailure(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // Only these phrases (kit's browserCauses): the runs service refuses any other cause.
  if (/executable doesn't exist|ENOENT/.test(text)) return browserCauses.notInstalled;
  if (/EACCES|EPERM/.test(text)) return browserCauses.notExecutable;
  const library = /error while loading shared libraries: ([\w.+-]+)/.exec(text);
  if (library) return browserCauses.missingLibrary(library[1]);
  // Chromium's own words when it cannot make its namespaces (or is root without --no-sandbox), and
  // Playwright's when it sees them.
  if (/No usable sandbox|Running as root without --no-sandbox|Chromium sandboxing failed/.test(text))
    return browserCauses.noSandbox;
  if (/Timeout \d+ms exceeded/.test(text)) return browserCauses.didNotStart(launchTimeoutMs / 1000);
  return browserCauses.exited;
}

/**
 * The browser crashed or disconnected while a test used it: the test cannot go on, and its result
 * would say nothing about the target. The executor leaves the test's lease to lapse, so it runs
 * again under the runs service's lease rules (MAX_ATTEMPTS bounds a page that crashes it each time).
 */
export class BrowserLost extends Error {
  override name = "BrowserLost";
  constructor() {
    super("the browser crashed or disconnected");
  }
}

/** A counting semaphore whose waiters give up when their signal aborts (the test's deadline). */
class Slots {
  #free: number;
  readonly #waiters: (() => void)[] = [];

  constructor(count: number) {
    this.#free = count;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const granted = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = this.#waiters.indexOf(granted);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(signal.reason);
      };
      this.#waiters.push(granted);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free++;
  }
}

/** A test's browser context; `close` ends it and frees its slot (once, however often called). */
export interface PooledContext {
  context: BrowserContext;
  browser: Browser;
  close(): Promise<void>;
}

/** One browser process of the pool and the project it serves. */
interface Held {
  browser: Promise<Browser>;
  /** The browser `browser` resolved to, once launched. */
  live?: Browser;
  /** The project whose tests it runs; undefined until its first test (launched by the check). */
  project: string | undefined;
  /** Contexts open in it (tests running in it), and tests about to open one. */
  users: number;
}

export class BrowserPool {
  readonly #o: BrowserPoolOptions;
  readonly #slots: Slots;
  readonly #maxBrowsers: number;
  readonly #held: Held[] = [];
  /** Tests waiting for a browser to turn idle (every browser busy with another project). */
  readonly #browserWaiters = new Set<() => void>();
  /** Browsers being closed (retired or dropped), awaited by `close`. */
  readonly #closing = new Set<Promise<void>>();
  #sandbox: Promise<PreparedSandbox> | undefined;
  #open = 0;
  #unnamed = 0;
  #launches = 0;
  #closed = false;

  constructor(options: BrowserPoolOptions) {
    this.#o = options;
    this.#slots = new Slots(options.contexts);
    this.#maxBrowsers = Math.max(1, options.browsers ?? options.contexts);
  }

  /** Contexts open now. */
  get open(): number {
    return this.#open;
  }

  /** Tests waiting for a context, or for a browser of their own project. */
  get waiting(): number {
    return this.#slots.waiting + this.#browserWaiters.size;
  }

  /** How many times a browser was launched (1 until it crashes or another project needs one). */
  get launches(): number {
    return this.#launches;
  }

  /** Browser processes up or starting now, and the project each serves (undefined: none yet). */
  get browsers(): (string | undefined)[] {
    return this.#held.map((held) => held.project);
  }

  /**
   * Launches a browser unless one runs already: the check that it starts at all (browser/probe.ts).
   * It then stays up for the next test, of whichever project. Rejects with BrowserUnavailable,
   * saying why.
   */
  async launch(): Promise<void> {
    if (this.#closed) throw new BrowserUnavailable(browserCauses.stopping);
    const held = this.#held[0] ?? this.#start(undefined);
    await held.browser;
  }

  /**
   * A fresh context in a browser that runs no other project's test, once a slot is free: waits
   * while `contexts` are open, or while every browser is busy with other projects, until `signal`
   * aborts (the test's deadline, or the test being stopped), which rejects with its reason.
   * Without `project` (tests of the pool), the context shares its browser with no other.
   */
  async openContext(signal: AbortSignal, project = `unnamed-${++this.#unnamed}`): Promise<PooledContext> {
    if (this.#closed) throw new BrowserUnavailable(browserCauses.stopping);
    await this.#slots.acquire(signal);
    this.#open++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#open--;
      this.#slots.release();
    };
    try {
      // A browser that died before its `disconnected` event was handled fails newContext: it is
      // dropped and another launched, once.
      for (let attempt = 1; ; attempt++) {
        const held = await this.#browserFor(project, signal);
        let browser: Browser | undefined;
        try {
          browser = await held.browser;
          const context = await browser.newContext(this.#o.contextOptions);
          return {
            context,
            browser,
            close: async () => {
              if (released) return;
              await context.close().catch(() => {});
              this.#leave(held);
              release();
            },
          };
        } catch (error) {
          this.#leave(held);
          if (!browser || browser.isConnected() || attempt >= 2) throw error;
          this.#forget(held);
        }
      }
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * The browser a test of `project` uses, counted as in use before this returns (so that no other
   * project's test can take it meanwhile): the project's own, a browser no test used yet, a new
   * one while fewer than the bound run, or a new one in place of an idle browser of another
   * project. Otherwise waits until a browser turns idle or goes away.
   */
  async #browserFor(project: string, signal: AbortSignal): Promise<Held> {
    for (;;) {
      if (this.#closed) throw new BrowserUnavailable(browserCauses.stopping);
      signal.throwIfAborted();
      let held =
        this.#held.find((h) => h.project === project) ?? this.#held.find((h) => h.project === undefined);
      if (!held) {
        const idle = this.#held.find((h) => h.users === 0);
        if (this.#held.length >= this.#maxBrowsers && idle) this.#retire(idle);
        if (this.#held.length < this.#maxBrowsers) held = this.#start(project);
      }
      if (held) {
        held.project = project;
        held.users++;
        return held;
      }
      await this.#browserFreed(signal);
    }
  }

  /** Resolves at the next change that may free a browser; rejects when `signal` aborts. */
  #browserFreed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const freed = () => {
        signal.removeEventListener("abort", onAbort);
        this.#browserWaiters.delete(freed);
        resolve();
      };
      const onAbort = () => {
        this.#browserWaiters.delete(freed);
        reject(signal.reason);
      };
      this.#browserWaiters.add(freed);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Wakes every test waiting for a browser: each looks again (`#browserFor`). */
  #wake(): void {
    for (const waiter of [...this.#browserWaiters]) waiter();
  }

  /** A test is done with `held` (its context closed, or never opened). */
  #leave(held: Held): void {
    held.users--;
    if (held.users === 0) this.#wake();
  }

  #start(project: string | undefined): Held {
    const { proxy, launchOptions = {}, logger } = this.#o;
    const held = { project, users: 0 } as Held;
    held.browser = this.#prepared()
      .then(async (sandbox) => {
        // Checked here, not by the launch: through the sandbox's wrapper a missing or
        // non-executable chromium would look like one that exited (launchFailure reads ENOENT, EACCES).
        await access(this.#o.executablePath, constants.X_OK);
        return chromium.launch({
          timeout: launchTimeoutMs,
          ...launchOptions,
          ...sandbox.launch,
          ...(proxy && { proxy }),
          args: [...baseChromiumArgs, ...(launchOptions.args ?? [])],
        });
      })
      .then(
        (browser) => {
          if (this.#closed || !this.#held.includes(held)) {
            void browser.close().catch(() => {});
            throw new BrowserUnavailable(browserCauses.stopping);
          }
          this.#launches++;
          held.live = browser;
          browser.on("disconnected", () => {
            if (this.#closed || !this.#held.includes(held)) return;
            logger?.warn("a browser disconnected (crashed or killed); the next browser test starts another");
            this.#forget(held);
          });
          logger?.debug({ version: browser.version(), browsers: this.#held.length }, "browser started");
          return browser;
        },
        (error: unknown) => {
          this.#forget(held);
          if (error instanceof BrowserUnavailable) throw error;
          // Said once, when the kind turns unavailable (kinds.ts), not at every retry; the error
          // itself (it names paths) is for operators.
          logger?.debug(
            { err: error, executablePath: this.#o.executablePath },
            "the browser could not be started",
          );
          throw new BrowserUnavailable(launchFailure(error), { cause: error });
        },
      );
    // Its rejection is seen by whoever awaits it; this keeps an unawaited one from being unhandled.
    held.browser.catch(() => {});
    this.#held.push(held);
    return held;
  }

  /** The sandbox's launch options, prepared once (the wrapper written when root). */
  #prepared(): Promise<PreparedSandbox> {
    if (!this.#sandbox) {
      const { executablePath, sandbox = defaultSandbox, logger } = this.#o;
      this.#sandbox = prepareSandbox(executablePath, sandbox, logger);
      this.#sandbox.then(
        ({ summary }) => logger?.info({ ...summary, browsers: this.#maxBrowsers }, "browser sandbox"),
        () => {},
      );
    }
    return this.#sandbox;
  }

  /** Closes an idle browser of another project, to launch one in its place. */
  #retire(held: Held): void {
    this.#forget(held);
    this.#closeLater(held);
  }

  /** Drops a browser (dead, retired or failed to start): the next test launches another. */
  #forget(held: Held): void {
    const at = this.#held.indexOf(held);
    if (at < 0) return;
    this.#held.splice(at, 1);
    this.#wake();
  }

  #closeLater(held: Held): void {
    const closing = held.browser
      .then((browser) => browser.close())
      .catch(() => {})
      .finally(() => this.#closing.delete(closing));
    this.#closing.add(closing);
  }

  /** Closes every browser (at shutdown, once the tests are done). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const held of this.#held.splice(0)) this.#closeLater(held);
    this.#wake();
    await Promise.all([...this.#closing]);
    await (await this.#sandbox?.catch(() => undefined))?.close().catch(() => {});
  }
}
