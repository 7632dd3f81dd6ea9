// Chromium's own sandbox (docs/security.md, "The browser's sandbox"): every renderer, which runs
// the pages under test, in its own user, PID and network namespaces under a seccomp-BPF filter, so
// that a page that takes over its renderer reaches neither the other pages nor the executor.
// Chromium refuses its sandbox as root, and the namespace sandbox needs user namespaces:
// - an executor running as root (development, tests) starts chromium as BROWSER_UID:BROWSER_GID
//   through a small wrapper (setpriv, util-linux), with the browser's profile handed to that user;
// - an executor that is not root (the image: 65532) starts chromium as itself, and chromium makes
//   its namespaces unprivileged (the pod must allow user namespaces: docs/deploy.md).
// Either way chromium gets an environment of its own, without the executor's token or URLs.
// BROWSER_SANDBOX=off (for platforms that refuse user namespaces) launches with --no-sandbox, said
// as a warning at start.
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "@testrun/kit";
import type { LaunchOptions } from "playwright-core";

export interface SandboxSettings {
  /** false: --no-sandbox (BROWSER_SANDBOX=off). */
  enabled: boolean;
  /** The user and group chromium runs as when the executor is root (BROWSER_UID, BROWSER_GID). */
  uid: number;
  gid: number;
}

/** On, as the unprivileged `nobody` when the executor is root. */
export const defaultSandbox: SandboxSettings = { enabled: true, uid: 65534, gid: 65534 };

/**
 * The variables chromium keeps from the executor's environment: what it needs to find programs,
 * fonts, the language and the time zone. Nothing else: a browser process taken over never holds
 * EXECUTOR_TOKEN, REDIS_URL or the services' URLs.
 */
const keptVariables = [
  "PATH",
  "HOME",
  "TMPDIR",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "TZ",
  "FONTCONFIG_FILE",
  "FONTCONFIG_PATH",
];

export function browserEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of keptVariables) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** A shell word: single-quoted, its own quotes closed and escaped. */
const shellWord = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * The wrapper a root executor launches instead of chromium: it hands the profile folder Playwright
 * made (root's, mode 0700) to the browser's user, makes that folder the browser's home (fontconfig
 * and NSS write there), then becomes that user, with no supplementary group and no capability left
 * in any set, and runs chromium with Playwright's arguments (the pipe to the browser, fds 3 and 4,
 * stays open across both execs).
 */
function wrapperScript(executablePath: string, uid: number, gid: number): string {
  return `#!/bin/sh
# Written by the Testrun executor (services/executor/src/browser/sandbox.ts).
set -eu
profile=
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) profile="\${arg#--user-data-dir=}" ;; esac
done
if [ -n "$profile" ]; then
  chown -R ${uid}:${gid} -- "$profile"
  HOME="$profile"
  export HOME
fi
exec setpriv --reuid=${uid} --regid=${gid} --clear-groups --inh-caps=-all --bounding-set=-all -- ${shellWord(executablePath)} "$@"
`;
}

/** What the pool's launches take from the sandbox, and what the log says of it at start. */
export interface PreparedSandbox {
  launch: Pick<LaunchOptions, "executablePath" | "chromiumSandbox" | "env">;
  /** For the start's log line: on or off, and as which user. */
  summary: { sandbox: "on" | "off"; user?: string };
  /** Removes the wrapper (at the pool's close). */
  close(): Promise<void>;
}

/**
 * Launch options for `executablePath` under `settings`: the wrapper (written to a folder of its
 * own, root's alone) when this process is root, sandbox or not, chromium itself otherwise; always
 * a scrubbed environment, and Playwright's chromiumSandbox switch (false adds --no-sandbox).
 */
export async function prepareSandbox(
  executablePath: string,
  settings: SandboxSettings,
  logger?: Logger,
): Promise<PreparedSandbox> {
  const env = browserEnv();
  if (!settings.enabled)
    logger?.warn(
      "BROWSER_SANDBOX=off: chromium runs with --no-sandbox; a page that takes over its renderer acts as the browser's user, with whatever that user may reach (docs/security.md)",
    );
  const chromiumSandbox = settings.enabled;
  const sandbox = settings.enabled ? ("on" as const) : ("off" as const);
  if (process.getuid?.() !== 0) {
    return {
      launch: { executablePath, chromiumSandbox, env },
      summary: { sandbox, user: `${process.getuid?.()} (the executor's)` },
      close: async () => {},
    };
  }
  // As root, chromium runs as the browser's user even without its sandbox.
  const dir = await mkdtemp(join(tmpdir(), "testrun-chromium-"));
  const wrapper = join(dir, "chromium");
  await writeFile(wrapper, wrapperScript(executablePath, settings.uid, settings.gid), { mode: 0o700 });
  await chmod(wrapper, 0o700);
  return {
    launch: { executablePath: wrapper, chromiumSandbox, env },
    summary: { sandbox, user: `${settings.uid}:${settings.gid}` },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
