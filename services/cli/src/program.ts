// The command tree of testrunctl: parses the command line, calls the command functions, prints.
// Each command group registers itself from its own file (commands/*.ts).
// Exit codes: 0 done, 1 a service (or the CLI after asking one) refused or failed, 2 a usage error.
import { Command, CommanderError } from "commander";
import { type CliIo, commandKit } from "./command-kit.js";
import { registerContentCommands } from "./commands/content.js";
import { registerCreditCommands } from "./commands/credits.js";
import { registerKeyCommands } from "./commands/keys.js";
import { registerOrganizationCommands } from "./commands/organizations.js";
import { registerProjectCommands } from "./commands/projects.js";
import { registerVariableCommands } from "./commands/variables.js";
import { type CliContext, createCliContext, defaultUrls } from "./context.js";
import { CommandError, describeServiceError, ServiceCallError, UsageError } from "./errors.js";

export type { CliIo } from "./command-kit.js";

/** Runs one command line (without `node` and the script) and resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // Secrets that passed through this run, blanked out of any error text as a last line of defence.
  const secrets = new Set<string>();
  let context: CliContext | undefined;
  const ctx = () => {
    context ??= createCliContext(io.env);
    return context;
  };
  const program = buildProgram(io, ctx, secrets);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2; // commander said why
    const redact = (text: string) =>
      [...secrets].reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
    if (error instanceof UsageError) {
      io.stderr(`error: ${redact(error.message)}\n`);
      return 2;
    }
    if (error instanceof ServiceCallError) {
      io.stderr(`error: ${redact(describeServiceError(error))}\n`);
      return 1;
    }
    if (error instanceof CommandError) {
      io.stderr(`error: ${redact(error.message)}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`error: unexpected failure: ${redact(message.split("\n")[0] ?? "")}\n`);
    return 1;
  }
}

function buildProgram(io: CliIo, ctx: () => CliContext, secrets: Set<string>): Command {
  const program = new Command("testrunctl")
    .description(
      "Administer Testrun: organizations, members, projects, environments, test plans, test cases, " +
        "variables, API keys and credits.\n\n" +
        "Talks gRPC to the services as an operator, with the service token:\n" +
        "  SERVICE_TOKEN   the internal service token (required)\n" +
        Object.entries(defaultUrls)
          .map(([name, url]) => `  ${name.padEnd(15)} default ${url}`)
          .join("\n"),
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(add --help for usage)");

  const kit = commandKit(io, ctx, secrets);
  // In the order `--help` lists them.
  registerOrganizationCommands(program, kit);
  registerProjectCommands(program, kit);
  registerContentCommands(program, kit);
  registerVariableCommands(program, kit);
  registerKeyCommands(program, kit);
  registerCreditCommands(program, kit);
  return program;
}
