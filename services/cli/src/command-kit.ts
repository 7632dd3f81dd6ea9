// What every command group of testrunctl registers its commands with (commands/*.ts): where to
// print, the services, and the options and printers all groups share.
import { readFile } from "node:fs/promises";
import { type Command, InvalidArgumentError, Option } from "commander";
import { parseId } from "./arguments.js";
import type { CliContext } from "./context.js";
import { UsageError } from "./errors.js";
import { jsonText } from "./output.js";
import type { ListView } from "./views.js";

/** Where the CLI reads and writes; tests and embedding callers pass their own. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** All of standard input, or (from a terminal) one line typed without echo after `prompt`. */
  readSecret(prompt: string): Promise<string>;
  /** All of standard input (for `--file -`). */
  readStdin(): Promise<string>;
  env: NodeJS.ProcessEnv;
}

export interface CommandKit {
  io: CliIo;
  /** The services, connected on first use (so `--help` and usage errors need no token). */
  ctx: () => CliContext;
  /** Secrets that passed through this run, blanked out of any error text (program.ts). */
  secrets: Set<string>;
  /** A command that prints: `--json` on every one, output through a view. */
  leaf: (parent: Command, spec: string, description: string) => Command;
  /** A list: JSON, or a table (or "no …" on stderr when empty). */
  print: <T>(options: { json?: boolean }, view: ListView<T>, items: readonly T[], json: unknown) => void;
  /** One item: JSON under `field`, or a one-row table. */
  printOne: <T>(options: { json?: boolean }, view: ListView<T>, value: T, field: string) => void;
  projectOption: () => Option;
  orgOption: () => Option;
}

const jsonHelp = "print JSON for scripts instead of columns (see docs/cli.md)";

export function commandKit(io: CliIo, ctx: () => CliContext, secrets: Set<string>): CommandKit {
  return {
    io,
    ctx,
    secrets,
    leaf: (parent, spec, description) =>
      parent.command(spec).description(description).option("--json", jsonHelp),
    print: (options, view, items, json) => {
      if (options.json) return io.stdout(jsonText(json));
      if (items.length === 0) return io.stderr(`no ${view.plural}\n`);
      io.stdout(view.table(items));
    },
    printOne: (options, view, value, field) => {
      if (options.json) return io.stdout(jsonText(view.oneJson(value, field)));
      io.stdout(view.table([value]));
    },
    projectOption: () =>
      new Option("-p, --project <id>", "the project (prj_…)").argParser(
        parser((v) => parseId(v, "prj", "project")),
      ),
    orgOption: () =>
      new Option("-o, --org <id>", "the organization (org_…)").argParser(
        parser((v) => parseId(v, "org", "organization")),
      ),
  };
}

/** Turns a UsageError of a value parser into commander's, so it names the option. */
export function parser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      if (error instanceof UsageError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

/** An option given several times, as a list. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A file the operator named; a missing one is a usage error, said without a stack. */
export async function readInput(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${path}: ${code === "ENOENT" ? "no such file" : (code ?? "failed")}`);
  }
}
