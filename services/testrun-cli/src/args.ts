// The command line of `testrun` (usage in help.ts), parsed with node:util parseArgs into one typed
// command. Anything wrong is a UsageError (exit code 5) that says what to write instead.
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { StartRunBody } from "@testrun/api-client";
import { parseDuration } from "./duration.js";

export class UsageError extends Error {
  override name = "UsageError";
}

/** How to wait for a run and what to report (run, rerun, wait). */
export interface WaitFlags {
  wait: boolean;
  timeoutMs: number;
  cancelOnTimeout: boolean;
  detach: boolean;
  allowSkipped: boolean;
  /** --fail-on new-failures: only failures new against the base run fail the job (exit 1); known ones warn. */
  failOn?: "new-failures";
  /** A run that passed with tests that passed only on retry (flaky) exits 1. */
  failOnFlaky?: boolean;
  junit?: string;
  json?: string;
  /** Download the artifacts of the run's tests into this directory. */
  artifacts?: string;
}

export type Command =
  | { name: "help"; topic?: string }
  | { name: "version" }
  | ({ name: "run"; body: StartRunBody } & WaitFlags)
  | ({ name: "rerun"; runId: string; failedOnly: boolean } & WaitFlags)
  | ({ name: "wait"; runId: string } & WaitFlags)
  | { name: "status"; runId: string; json?: string }
  | { name: "cancel"; runId: string }
  | { name: "mcp" }
  /** Push a folder of Playwright specs with the content token (push.ts). */
  | { name: "push"; folder: string; dryRun: boolean; json?: string; tags: string[] }
  | {
      name: "list";
      what: "plans" | "envs" | "cases" | "runs";
      json?: string;
      tags: string[];
      search?: string;
      limit?: number;
    };

export const defaultTimeoutMs = 60 * 60_000;

type Options = NonNullable<ParseArgsConfig["options"]>;

const waitOptions: Options = {
  timeout: { type: "string" },
  "cancel-on-timeout": { type: "boolean" },
  detach: { type: "boolean" },
  "allow-skipped": { type: "boolean" },
  "fail-on": { type: "string" },
  "fail-on-flaky": { type: "boolean" },
  junit: { type: "string" },
  json: { type: "string" },
  artifacts: { type: "string" },
};
const startOptions: Options = { ...waitOptions, "no-wait": { type: "boolean" } };

const optionsOf: Record<string, Options> = {
  run: {
    ...startOptions,
    plan: { type: "string" },
    tags: { type: "string" },
    cases: { type: "string" },
    env: { type: "string" },
    name: { type: "string" },
    retries: { type: "string" },
  },
  rerun: { ...startOptions, failed: { type: "boolean" } },
  wait: waitOptions,
  status: { json: { type: "string" } },
  cancel: {},
  mcp: {},
  push: { "dry-run": { type: "boolean" }, json: { type: "string" }, tags: { type: "string" } },
  list: {
    json: { type: "string" },
    tag: { type: "string", multiple: true },
    search: { type: "string" },
    limit: { type: "string" },
  },
};

const listable = {
  plans: "plans",
  envs: "envs",
  environments: "envs",
  cases: "cases",
  runs: "runs",
} as const;

/** A comma-separated list without empty items. */
const list = (text: string) =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** --fail-on's value: only new-failures is known (docs/pipelines.md, "New failures"). */
function failOnOf(value: string | undefined): Pick<WaitFlags, "failOn"> {
  if (value === undefined) return {};
  if (value !== "new-failures")
    throw new UsageError(`--fail-on "${value}" is not known: the only value is new-failures`);
  return { failOn: "new-failures" };
}

/** --retries N: 0 to 3, passed as the start's `retries` (docs/rest-api.md, "Starting a run"). */
function retriesOf(value: string | undefined): Pick<StartRunBody, "retries"> {
  if (value === undefined) return {};
  if (!/^[0-3]$/.test(value.trim()))
    throw new UsageError(`--retries must be a whole number from 0 to 3 (got "${value}")`);
  return { retries: Number(value) };
}

export function parseCommand(argv: string[]): Command {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    return { name: "help", ...(rest[0] && { topic: rest[0] }) };
  }
  if (name === "--version" || name === "-V" || name === "version") return { name: "version" };
  const options = optionsOf[name];
  if (!options)
    throw new UsageError(`unknown command "${name}"; commands: ${Object.keys(optionsOf).join(", ")}`);
  if (rest.includes("--help") || rest.includes("-h")) return { name: "help", topic: name };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ""));
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const str = (key: string) => {
    const value = values[key];
    if (typeof value !== "string") return undefined;
    if (!value.trim()) throw new UsageError(`--${key} needs a value`);
    return value;
  };
  const positionals = (count: number, what: string) => {
    if (parsed.positionals.length !== count) {
      throw new UsageError(
        parsed.positionals.length < count
          ? `${name}: ${what} is missing`
          : `${name}: unexpected "${parsed.positionals[count]}"`,
      );
    }
    return parsed.positionals;
  };

  const waitFlags = (): WaitFlags => {
    const timeoutText = str("timeout");
    const timeoutMs = timeoutText === undefined ? defaultTimeoutMs : parseDuration(timeoutText);
    if (timeoutMs === undefined)
      throw new UsageError(`--timeout "${timeoutText}" is not a duration: write 90s, 30m, 1h or 1h30m`);
    const wait = values["no-wait"] !== true;
    if (!wait) {
      const waiting = [
        "timeout",
        "cancel-on-timeout",
        "detach",
        "allow-skipped",
        "fail-on-flaky",
        "fail-on",
        "junit",
        "artifacts",
      ].find((key) => values[key] !== undefined);
      if (waiting) throw new UsageError(`--${waiting} has no use with --no-wait`);
    }
    return {
      wait,
      timeoutMs,
      cancelOnTimeout: values["cancel-on-timeout"] === true,
      detach: values.detach === true,
      allowSkipped: values["allow-skipped"] === true,
      ...failOnOf(str("fail-on")),
      ...(values["fail-on-flaky"] === true && { failOnFlaky: true }),
      ...optional("junit", str("junit")),
      ...optional("json", str("json")),
      ...optional("artifacts", str("artifacts")),
    };
  };

  switch (name) {
    case "run": {
      const given = (["plan", "tags", "cases"] as const).filter((key) => values[key] !== undefined);
      if (given.length !== 1) {
        throw new UsageError(
          given.length === 0
            ? "run: say what to run with one of --plan NAME|ID, --tags a,b or --cases ID,ID"
            : `run: give only one of --plan, --tags and --cases (got ${given.map((g) => `--${g}`).join(", ")})`,
        );
      }
      const selection = given[0] as "plan" | "tags" | "cases";
      const value = str(selection) ?? "";
      const items = list(value);
      if (selection !== "plan" && items.length === 0)
        throw new UsageError(`--${selection} needs at least one item`);
      const body: StartRunBody = {
        ...(selection === "plan" && { testPlan: value.trim() }),
        ...(selection === "tags" && { tags: items }),
        ...(selection === "cases" && { testCaseIds: items }),
        ...optional("environment", str("env")?.trim()),
        ...optional("name", str("name")),
        ...retriesOf(str("retries")),
      };
      positionals(0, "");
      return { name: "run", body, ...waitFlags() };
    }
    case "rerun": {
      const [runId = ""] = positionals(1, "RUN_ID");
      return { name: "rerun", runId, failedOnly: values.failed === true, ...waitFlags() };
    }
    case "wait": {
      const [runId = ""] = positionals(1, "RUN_ID");
      return { name: "wait", runId, ...waitFlags(), wait: true };
    }
    case "status": {
      const [runId = ""] = positionals(1, "RUN_ID");
      return { name: "status", runId, ...optional("json", str("json")) };
    }
    case "cancel": {
      const [runId = ""] = positionals(1, "RUN_ID");
      return { name: "cancel", runId };
    }
    case "mcp":
      positionals(0, "");
      return { name: "mcp" };
    case "push": {
      const [folder = ""] = positionals(1, "the folder of specs");
      return {
        name: "push",
        folder,
        dryRun: values["dry-run"] === true,
        tags: list(str("tags") ?? ""),
        ...optional("json", str("json")),
      };
    }
    default: {
      const [whatText = ""] = positionals(1, "what to list (plans, envs, cases or runs)");
      const what = listable[whatText as keyof typeof listable];
      if (!what) throw new UsageError(`list: "${whatText}" is not one of plans, envs, cases, runs`);
      const limitText = str("limit");
      const limit = limitText === undefined ? undefined : Number(limitText);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100))
        throw new UsageError("--limit must be a whole number from 1 to 100");
      const tags = (values.tag as string[] | undefined) ?? [];
      if (what !== "cases" && (tags.length || values.search !== undefined))
        throw new UsageError("--tag and --search apply to `list cases` only");
      if (what !== "runs" && limit !== undefined) throw new UsageError("--limit applies to `list runs` only");
      return {
        name: "list",
        what,
        tags,
        ...optional("json", str("json")),
        ...optional("search", str("search")),
        ...(limit !== undefined && { limit }),
      };
    }
  }
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
