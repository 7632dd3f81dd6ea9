// One Chromium per executor process, shared by its tests: each test gets a browser context of its
// own (no cookie, storage or cache shared with another test), at most `contexts` at a time. The
// browser is launched at start by an executor that takes browser tests (`launch`, browser/probe.ts:
// the check that it can run them; one that takes only HTTP tests never starts one), and launched
// again at the next browser step after it crashed or disconnected.
import { browserCauses, type Logger } from "@testrun/kit";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type LaunchOptions,
} from "playwright-core";

/**
 * Flags every launch gets. No sandbox: the executor runs as an unprivileged user in a container
 * without the namespaces Chromium's sandbox needs; the container and the egress guard are the
 * boundary. No background networking or component updates: the browser talks only to the pages a
 * test opens.
 */
export const baseChromiumArgs = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
];

export interface BrowserPoolOptions {
  /** The Chromium binary (CHROMIUM_PATH; Debian's /usr/bin/chromium). */
  executablePath: string;
  /** Browser contexts, hence browser tests, open at once in this process (BROWSER_CONTEXTS). */
  contexts: number;
  /**
   * The forward proxy every page's traffic goes through (the executor's egress proxy, which connects
   * through the EgressGuard). Playwright adds `<-loopback>` to the bypass list, so loopback is
   * proxied too.
   */
  proxy?: LaunchOptions["proxy"];
  /** More launch options (chromium-flags.ts); their `args` are added to baseChromiumArgs. */
  launchOptions?: Omit<LaunchOptions, "executablePath" | "proxy">;
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

export class BrowserPool {
  readonly #o: BrowserPoolOptions;
  readonly #slots: Slots;
  #browser: Promise<Browser> | undefined;
  /** The browser `#browser` resolved to, once launched. */
  #live: Browser | undefined;
  #open = 0;
  #launches = 0;
  #closed = false;

  constructor(options: BrowserPoolOptions) {
    this.#o = options;
    this.#slots = new Slots(options.contexts);
  }

  /** Contexts open now. */
  get open(): number {
    return this.#open;
  }

  /** Tests waiting for a context. */
  get waiting(): number {
    return this.#slots.waiting;
  }

  /** How many times a browser was launched (1 until it crashes). */
  get launches(): number {
    return this.#launches;
  }

  /**
   * Launches the browser unless it runs already: the check that it starts at all (browser/probe.ts).
   * It then stays up for the next test. Rejects with BrowserUnavailable, saying why.
   */
  async launch(): Promise<void> {
    if (this.#closed) throw new BrowserUnavailable(browserCauses.stopping);
    await this.#launched();
  }

  /**
   * A fresh context, once a slot is free: waits while `contexts` are open, until `signal` aborts
   * (the test's deadline, or the test being stopped), which rejects with the signal's reason.
   */
  async openContext(signal: AbortSignal): Promise<PooledContext> {
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
      // dropped and launched again, once.
      for (let attempt = 1; ; attempt++) {
        const browser = await this.#launched();
        try {
          const context = await browser.newContext(this.#o.contextOptions);
          return {
            context,
            browser,
            close: async () => {
              await context.close().catch(() => {});
              release();
            },
          };
        } catch (error) {
          if (browser.isConnected() || attempt >= 2) throw error;
          this.#forget(browser);
        }
      }
    } catch (error) {
      release();
      throw error;
    }
  }

  #launched(): Promise<Browser> {
    if (this.#browser) return this.#browser;
    const { executablePath, proxy, launchOptions = {}, logger } = this.#o;
    const launching = chromium
      .launch({
        timeout: launchTimeoutMs,
        ...launchOptions,
        executablePath,
        ...(proxy && { proxy }),
        args: [...baseChromiumArgs, ...(launchOptions.args ?? [])],
      })
      .then(
        (browser) => {
          if (this.#closed) {
            void browser.close().catch(() => {});
            throw new BrowserUnavailable(browserCauses.stopping);
          }
          this.#launches++;
          this.#live = browser;
          browser.on("disconnected", () => {
            if (this.#closed) return;
            logger?.warn(
              "the browser disconnected (crashed or killed); the next browser step starts another",
            );
            this.#forget(browser);
          });
          logger?.info({ version: browser.version() }, "browser started");
          return browser;
        },
        (error: unknown) => {
          if (this.#browser === launching) this.#browser = undefined;
          // Said once, when the kind turns unavailable (kinds.ts), not at every retry; the error
          // itself (it names paths) is for operators.
          logger?.debug({ err: error, executablePath }, "the browser could not be started");
          throw new BrowserUnavailable(launchFailure(error), { cause: error });
        },
      );
    this.#browser = launching;
    return launching;
  }

  /** Drops a dead browser so that the next context launches another. */
  #forget(browser: Browser): void {
    if (this.#live !== browser) return;
    this.#live = undefined;
    this.#browser = undefined;
  }

  /** Closes the browser (at shutdown, once the tests are done). */
  async close(): Promise<void> {
    this.#closed = true;
    const browser = this.#browser;
    this.#browser = undefined;
    this.#live = undefined;
    await (await browser?.catch(() => undefined))?.close().catch(() => {});
  }
}
