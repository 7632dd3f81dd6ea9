import type { TestKind } from "./dispatch.js";

/**
 * What executors report of the kinds of test they take (RunsService.ReportExecutorKinds; docs/
 * runs.md, "Kinds no executor can run"), shared by the executors that report and the runs service
 * that keeps the reports and tells users from them why a test waits or was skipped.
 */

/** How often an executor reports, besides at each change. */
export const kindReportEveryMs = 10_000;
/** How long a report counts after it was made: three reports, so one late or lost one changes nothing. */
export const kindReportTtlMs = 3 * kindReportEveryMs;

/** The longest cause kept (the rest is cut): a summary saying it stays within 300 characters. */
export const kindCauseMaxLength = 200;

/** How a user names the tests of a kind. */
export const kindTestsName: Readonly<Record<TestKind, string>> = {
  http: "HTTP tests",
  browser: "browser tests",
  spec: "Playwright specs",
};

/**
 * A cause as it may be shown to a user: one line of printable characters, at most
 * `kindCauseMaxLength`. What an executor reported is not trusted further than that.
 */
export function kindCause(text: string): string {
  // Control and format characters (\p{C}: a line break, a bidi override) become spaces.
  const line = text.replace(/[\p{C}\u2028\u2029\s]+/gu, " ").trim();
  const chars = [...line];
  return chars.length <= kindCauseMaxLength ? line : `${chars.slice(0, kindCauseMaxLength - 1).join("")}…`;
}

/**
 * The causes executors say (services/executor/src/browser/pool.ts builds them from these), the only
 * ones the runs service accepts: a cause is shown in every project's waiting and skip messages, so
 * an executor token may not put its own words there (a link, "contact support at …").
 */
export const browserCauses = {
  notInstalled: "the browser is not installed (no file at CHROMIUM_PATH)",
  notExecutable: "the browser cannot be executed (CHROMIUM_PATH: permission denied)",
  /** Names the library when it looks like one (lib….so…); a name that does not is left out. */
  missingLibrary: (library?: string) =>
    library && sharedLibrary.test(library)
      ? `the browser is missing a system library (${library})`
      : "the browser is missing a system library",
  didNotStart: (seconds: number) => `the browser did not start within ${seconds} s`,
  exited: "the browser exited as it started",
  /** Chromium found no usable sandbox: user namespaces refused (docs/deploy.md, BROWSER_SANDBOX). */
  noSandbox: "the browser's sandbox could not start (user namespaces unavailable)",
  stopping: "the executor is stopping",
} as const;

/**
 * Why an executor configured for Playwright specs cannot run them (services/executor/src/wiring.ts):
 * they are turned off, or it cannot make the user-code sandbox they run in.
 */
export const specCauses = {
  off: "Playwright specs are turned off (PLAYWRIGHT_SPECS=off)",
  noSandbox:
    "the sandbox specs run in cannot be made: it needs an executor running as root (docs/deploy.md, Playwright specs)",
  /** Root, but the node refused it (user namespaces off, a runtime profile refusing mounts): the log says how. */
  sandboxFailed:
    "the sandbox specs run in could not be made on the executor's node (docs/deploy.md, Playwright specs)",
} as const;

/** A shared library's file name as the dynamic loader names it: libnss3.so, libatk-1.0.so.0. */
const sharedLibrary = /^lib[\w+-]{1,60}(\.[\w+-]{1,20}){0,3}\.so(\.\d{1,6}){0,3}$/;

/** The accepted causes, for a refusal's message; <…> marks the one variable part of two of them. */
export const knownKindCauses: readonly string[] = [
  browserCauses.notInstalled,
  browserCauses.notExecutable,
  "the browser is missing a system library",
  "the browser is missing a system library (<lib….so>)",
  "the browser did not start within <seconds> s",
  browserCauses.exited,
  browserCauses.noSandbox,
  browserCauses.stopping,
  specCauses.off,
  specCauses.noSandbox,
  specCauses.sandboxFailed,
];

const fixedCauses = new Set<string>([
  browserCauses.notInstalled,
  browserCauses.notExecutable,
  browserCauses.missingLibrary(),
  browserCauses.exited,
  browserCauses.noSandbox,
  browserCauses.stopping,
  specCauses.off,
  specCauses.noSandbox,
  specCauses.sandboxFailed,
]);

/** Whether `cause` is one of the phrases executors say (`knownKindCauses`). */
export function isKnownKindCause(cause: string): boolean {
  if (fixedCauses.has(cause)) return true;
  const library = /^the browser is missing a system library \((.*)\)$/.exec(cause);
  if (library) return sharedLibrary.test(library[1] ?? "");
  return /^the browser did not start within [1-9]\d{0,3} s$/.test(cause);
}

/**
 * How many executors' reports the runs service keeps at once (every replica together): enough for
 * any fleet, few enough that an executor token cannot fill Redis with made-up executor names.
 */
export const maxReportingExecutors = 1_000;
