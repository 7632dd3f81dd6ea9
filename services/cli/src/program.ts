// The command tree of testrunctl: parses the command line, calls the command functions, prints.
// Exit codes: 0 done, 1 a service (or the CLI after asking one) refused or failed, 2 a usage error.
import { readFile } from "node:fs/promises";
import { MemberState } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { parseExpiry, parseId, parseRole, parseText, parseWholeNumber, variableValue } from "./arguments.js";
import { createTestCases, createTestPlan, listTestCases, listTestPlans } from "./commands/content.js";
import { getBalance, grantCredits, listLedger } from "./commands/credits.js";
import { createKey, listKeys, revokeKey } from "./commands/keys.js";
import {
  addMember,
  changeMemberRole,
  createOrganization,
  createSignInLink,
  listMembers,
  listOrganizations,
  removeMember,
} from "./commands/organizations.js";
import { createEnvironment, createProject, listEnvironments, listProjects } from "./commands/projects.js";
import { deleteVariable, listVariables, setVariable } from "./commands/variables.js";
import { type CliContext, createCliContext, defaultUrls } from "./context.js";
import { CommandError, describeServiceError, ServiceCallError, UsageError } from "./errors.js";
import { jsonText } from "./output.js";
import { parseTestCaseFile } from "./test-case-file.js";
import {
  environmentView,
  keyView,
  type ListView,
  ledgerView,
  memberView,
  organizationView,
  projectView,
  testCaseView,
  testPlanView,
  variableView,
} from "./views.js";

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

const jsonHelp = "print JSON for scripts instead of columns (see docs/cli.md)";

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

/** Turns a UsageError of a value parser into commander's, so it names the option. */
function parser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      if (error instanceof UsageError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

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

  /** A command that prints: `--json` on every one, output through a view. */
  const leaf = (parent: Command, spec: string, description: string) =>
    parent.command(spec).description(description).option("--json", jsonHelp);

  const print = <T>(options: { json?: boolean }, view: ListView<T>, items: readonly T[], json: unknown) => {
    if (options.json) return io.stdout(jsonText(json));
    if (items.length === 0) return io.stderr(`no ${view.plural}\n`);
    io.stdout(view.table(items));
  };

  const projectOption = () =>
    new Option("-p, --project <id>", "the project (prj_…)").argParser(
      parser((v) => parseId(v, "prj", "project")),
    );
  const orgOption = () =>
    new Option("-o, --org <id>", "the organization (org_…)").argParser(
      parser((v) => parseId(v, "org", "organization")),
    );

  // --- organizations -------------------------------------------------------------------------
  const org = program.command("org").description("organizations");
  leaf(org, "create <name>", "create an organization, optionally with its first owner")
    .option("--owner-email <email>", "email of the first member, made owner")
    .option("--owner-name <name>", "display name of that member (required with --owner-email)")
    .action(async (name: string, options: { json?: boolean; ownerEmail?: string; ownerName?: string }) => {
      const response = await createOrganization(ctx(), {
        name: parseText(name, "the name"),
        ownerEmail: options.ownerEmail,
        ownerName: options.ownerName,
      });
      const organization = response.organization;
      if (options.json) return io.stdout(jsonText(organizationView.responseJson(response)));
      if (organization) io.stdout(organizationView.table([organization]));
      if (response.owner) io.stdout(`\nowner:\n${memberView.table([response.owner])}`);
    });
  leaf(org, "list", "list every organization, oldest first").action(async (options: { json?: boolean }) => {
    const organizations = await listOrganizations(ctx());
    print(options, organizationView, organizations, organizationView.listJson(organizations));
  });

  // --- members -------------------------------------------------------------------------------
  const member = program.command("member").description("members of an organization and their roles");
  leaf(member, "add", "add a member (re-adding a removed member's email reactivates it)")
    .addOption(orgOption().makeOptionMandatory())
    .requiredOption("--email <email>", "the member's email address")
    .requiredOption("--name <name>", "the name shown in the console")
    .addOption(
      new Option("--role <role>", "owner, admin, editor or viewer")
        .argParser(parser(parseRole))
        .makeOptionMandatory(),
    )
    .action(async (options: { json?: boolean; org: string; email: string; name: string; role: number }) => {
      const added = await addMember(ctx(), {
        organizationId: options.org,
        email: options.email,
        displayName: options.name,
        role: options.role,
      });
      printOne(options, memberView, added, "member");
    });
  leaf(member, "list", "list an organization's members, oldest first")
    .addOption(orgOption().makeOptionMandatory())
    .option("--include-removed", "also list removed members")
    .action(async (options: { json?: boolean; org: string; includeRemoved?: boolean }) => {
      const members = await listMembers(ctx(), {
        organizationId: options.org,
        includeRemoved: options.includeRemoved ?? false,
      });
      print(options, memberView, members, memberView.listJson(members));
    });
  leaf(
    member,
    "set-role <member-id> <role>",
    "change a member's role (owner, admin, editor, viewer); a change to viewer kills the member's API keys for good",
  ).action(async (memberId: string, role: string, options: { json?: boolean }) => {
    const changed = await changeMemberRole(ctx(), {
      memberId: parseId(memberId, "mem", "the member"),
      role: parseRole(role),
    });
    printOne(options, memberView, changed, "member");
  });
  leaf(member, "remove <member-id>", "remove a member; the member's API keys stop working for good").action(
    async (memberId: string, options: { json?: boolean }) => {
      const removed = await removeMember(ctx(), { memberId: parseId(memberId, "mem", "the member") });
      if (!options.json && removed.state === MemberState.REMOVED) io.stderr(`removed ${removed.email}\n`);
      printOne(options, memberView, removed, "member");
    },
  );

  leaf(
    member,
    "sign-in-link <member-id>",
    "print a one-time link that signs the member in to the web console (valid 15 minutes, usable once)",
  ).action(async (memberId: string, options: { json?: boolean }) => {
    const link = await createSignInLink(ctx(), { memberId: parseId(memberId, "mem", "the member") });
    if (options.json)
      return io.stdout(
        jsonText({ url: link.url, email: link.email, expiresAt: link.expiresAt?.toISOString() }),
      );
    // The link alone on stdout, so `$(testrunctl member sign-in-link …)` is the link.
    io.stdout(`${link.url}\n`);
    io.stderr(`signs in ${link.email}; usable once, until ${link.expiresAt?.toISOString()}\n`);
  });

  // --- projects ------------------------------------------------------------------------------
  const project = program.command("project").description("projects of an organization");
  leaf(project, "create <name>", "create a project")
    .addOption(orgOption().makeOptionMandatory())
    .option("--description <text>", "free text, at most 2000 characters")
    .action(async (name: string, options: { json?: boolean; org: string; description?: string }) => {
      const created = await createProject(ctx(), {
        organizationId: options.org,
        name: parseText(name, "the name"),
        description: options.description,
      });
      printOne(options, projectView, created, "project");
    });
  leaf(project, "list", "list an organization's projects, oldest first")
    .addOption(orgOption().makeOptionMandatory())
    .action(async (options: { json?: boolean; org: string }) => {
      const projects = await listProjects(ctx(), { organizationId: options.org });
      print(options, projectView, projects, projectView.listJson(projects));
    });

  // --- environments --------------------------------------------------------------------------
  const env = program.command("env").description("environments of a project (deployments runs target)");
  leaf(env, "create <name>", "create an environment")
    .addOption(projectOption().makeOptionMandatory())
    .requiredOption("--base-url <url>", "absolute http(s) URL the steps' paths are appended to")
    .option("--default", "make it the project's default environment (the previous default stops being one)")
    .action(
      async (
        name: string,
        options: { json?: boolean; project: string; baseUrl: string; default?: boolean },
      ) => {
        const created = await createEnvironment(ctx(), {
          projectId: options.project,
          name: parseText(name, "the name"),
          baseUrl: options.baseUrl,
          isDefault: options.default ?? false,
        });
        printOne(options, environmentView, created, "environment");
      },
    );
  leaf(env, "list", "list a project's environments, oldest first")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (options: { json?: boolean; project: string }) => {
      const environments = await listEnvironments(ctx(), { projectId: options.project });
      print(options, environmentView, environments, environmentView.listJson(environments));
    });

  // --- test cases ----------------------------------------------------------------------------
  const testCase = program.command("case").description("test cases of a project");
  leaf(testCase, "create", "create test cases from a JSON or YAML file holding one test case or a list")
    .addOption(projectOption().makeOptionMandatory())
    .requiredOption("-f, --file <path>", 'the file ("-" reads standard input as YAML or JSON)')
    .action(async (options: { json?: boolean; project: string; file: string }) => {
      const text = options.file === "-" ? await io.readStdin() : await readInput(options.file);
      const testCases = parseTestCaseFile(text, options.file === "-" ? "stdin" : options.file);
      const created = await createTestCases(ctx(), { projectId: options.project, testCases });
      if (options.json) return io.stdout(jsonText(testCaseView.listJson(created)));
      io.stdout(testCaseView.table(created));
    });
  leaf(testCase, "list", "list a project's test cases, oldest first (at most 500)")
    .addOption(projectOption().makeOptionMandatory())
    .option("--tag <tag>", "only test cases having this tag (repeat for any of several)", collect)
    .option("--search <text>", "only test cases whose name contains this text, ignoring case")
    .option("--steps", "include each test case's steps (JSON output)")
    .action(
      async (options: {
        json?: boolean;
        project: string;
        tag?: string[];
        search?: string;
        steps?: boolean;
      }) => {
        const { testCases, truncated } = await listTestCases(ctx(), {
          projectId: options.project,
          tags: options.tag,
          search: options.search,
          includeSteps: options.steps ?? false,
        });
        if (options.json) {
          return io.stdout(jsonText({ ...testCaseView.listJson(testCases), truncated }));
        }
        print(options, testCaseView, testCases, undefined);
        if (truncated) io.stderr("more than 500 test cases matched: only the first 500 are listed\n");
      },
    );

  // --- test plans ----------------------------------------------------------------------------
  const plan = program.command("plan").description("test plans of a project (ordered lists of test cases)");
  leaf(plan, "create <name>", "create a test plan")
    .addOption(projectOption().makeOptionMandatory())
    .option("-c, --case <id-or-name>", "a test case, by id or exact name (repeat, in run order)", collect)
    .option("--description <text>", "free text, at most 2000 characters")
    .action(
      async (
        name: string,
        options: { json?: boolean; project: string; case?: string[]; description?: string },
      ) => {
        const created = await createTestPlan(ctx(), {
          projectId: options.project,
          name: parseText(name, "the name"),
          description: options.description,
          testCases: options.case ?? [],
        });
        printOne(options, testPlanView, created, "testPlan");
      },
    );
  leaf(plan, "list", "list a project's test plans, oldest first")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (options: { json?: boolean; project: string }) => {
      const testPlans = await listTestPlans(ctx(), { projectId: options.project });
      print(options, testPlanView, testPlans, testPlanView.listJson(testPlans));
    });

  // --- variables -----------------------------------------------------------------------------
  const variable = program
    .command("var")
    .description("project variables: secrets steps use as {{NAME}}; values are never shown");
  leaf(variable, "set <name>", "create a variable, or replace the value of the one of that name")
    .addOption(projectOption().makeOptionMandatory())
    .option(
      "--value <value>",
      "the value; WARNING: a value given here can land in your shell history and the process list. " +
        "Without it the value is read from standard input (typed without echo on a terminal)",
    )
    .action(async (name: string, options: { json?: boolean; project: string; value?: string }) => {
      const variableName = parseText(name, "the name");
      const raw = options.value ?? (await io.readSecret(`value of ${variableName} (not echoed): `));
      if (raw) secrets.add(raw);
      const value = variableValue(raw);
      secrets.add(value);
      const { variable: saved, created } = await setVariable(ctx(), {
        projectId: options.project,
        name: variableName,
        value,
      });
      if (options.json) return io.stdout(jsonText({ ...variableView.oneJson(saved, "variable"), created }));
      io.stdout(variableView.table([saved]));
      io.stderr(`${created ? "created" : "value replaced of"} variable ${saved.name}\n`);
    });
  leaf(variable, "list", "list a project's variables (names only), oldest first")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (options: { json?: boolean; project: string }) => {
      const variables = await listVariables(ctx(), { projectId: options.project });
      print(options, variableView, variables, variableView.listJson(variables));
    });
  leaf(variable, "delete <name-or-id>", "delete a variable")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (reference: string, options: { json?: boolean; project: string }) => {
      const deleted = await deleteVariable(ctx(), { projectId: options.project, variable: reference });
      if (!options.json) io.stderr(`deleted variable ${deleted.name}\n`);
      printOne(options, variableView, deleted, "variable");
    });

  // --- API keys ------------------------------------------------------------------------------
  const key = program.command("key").description("project API keys (what pipelines and agents use with /v1)");
  leaf(key, "create <name>", "create a key; its secret is printed this once and can never be shown again")
    .addOption(projectOption().makeOptionMandatory())
    .addOption(
      new Option("--creator <member-id>", "the member the key acts for: an active editor or above (mem_…)")
        .argParser(parser((v) => parseId(v, "mem", "the creator")))
        .makeOptionMandatory(),
    )
    .addOption(
      new Option("--expiry <expiry>", "lifetime").choices(["30d", "90d", "1y", "never"]).default("90d"),
    )
    .action(
      async (name: string, options: { json?: boolean; project: string; creator: string; expiry: string }) => {
        const response = await createKey(ctx(), {
          projectId: options.project,
          name: parseText(name, "the name"),
          creatorMemberId: options.creator,
          expiry: parseExpiry(options.expiry),
        });
        secrets.add(response.secret);
        io.stderr(
          "The secret below is shown this once and cannot be retrieved again: store it in a secret store now " +
            "(e.g. your CI's secrets), never in a repository.\n",
        );
        if (options.json) return io.stdout(jsonText(keyView.createdJson(response)));
        io.stdout(keyView.table(response.key ? [response.key] : []));
        io.stdout(`\nsecret: ${response.secret}\n`);
      },
    );
  leaf(key, "list", "list a project's keys, oldest first (never their secrets)")
    .addOption(projectOption().makeOptionMandatory())
    .option("--include-revoked", "also list revoked keys")
    .action(async (options: { json?: boolean; project: string; includeRevoked?: boolean }) => {
      const keys = await listKeys(ctx(), {
        projectId: options.project,
        includeRevoked: options.includeRevoked,
      });
      print(options, keyView, keys, keyView.listJson(keys));
    });
  leaf(key, "revoke <key-id>", "revoke a key at once and for good")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (keyId: string, options: { json?: boolean; project: string }) => {
      const revoked = await revokeKey(ctx(), {
        projectId: options.project,
        keyId: parseId(keyId, "key", "the key"),
      });
      if (!options.json) io.stderr(`revoked key ${revoked.id}\n`);
      printOne(options, keyView, revoked, "key");
    });

  // --- credits -------------------------------------------------------------------------------
  const credits = program.command("credits").description("a project's test-run credits (one credit a test)");
  leaf(credits, "grant <amount>", "add credits to a project")
    .addOption(projectOption().makeOptionMandatory())
    .requiredOption("--reason <text>", "why, for the ledger (e.g. an invoice reference)")
    .option(
      "--idempotency-key <key>",
      "makes a retry safe: a second grant with the same key adds nothing (default: a random key, so a retried command grants again)",
    )
    .action(
      async (
        amount: string,
        options: { json?: boolean; project: string; reason: string; idempotencyKey?: string },
      ) => {
        const response = await grantCredits(ctx(), {
          projectId: options.project,
          amount: parseWholeNumber(amount, "the amount", 1, 1_000_000_000),
          reason: parseText(options.reason, "the reason"),
          idempotencyKey: options.idempotencyKey,
        });
        if (options.json) return io.stdout(jsonText(ledgerView.grantJson(response)));
        io.stdout(ledgerView.table(response.entry ? [response.entry] : []));
        io.stderr(`balance now ${response.balance}\n`);
      },
    );
  leaf(credits, "balance", "show a project's balance")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (options: { json?: boolean; project: string }) => {
      const balance = await getBalance(ctx(), { projectId: options.project });
      if (options.json) return io.stdout(jsonText({ projectId: options.project, balance: String(balance) }));
      io.stdout(`${balance}\n`);
    });
  leaf(credits, "ledger", "list a project's ledger entries, newest first")
    .addOption(projectOption().makeOptionMandatory())
    .option(
      "--limit <n>",
      "most entries to show",
      parser((v) => parseWholeNumber(v, "--limit", 1, 100_000)),
      100,
    )
    .option(
      "--run <run-id>",
      "only the entries of this run",
      parser((v) => parseId(v, "run", "the run")),
    )
    .action(async (options: { json?: boolean; project: string; limit: number; run?: string }) => {
      const entries = await listLedger(ctx(), {
        projectId: options.project,
        limit: options.limit,
        runId: options.run,
      });
      print(options, ledgerView, entries, ledgerView.listJson(entries));
    });

  function printOne<T>(options: { json?: boolean }, view: ListView<T>, value: T, field: string) {
    if (options.json) return io.stdout(jsonText(view.oneJson(value, field)));
    io.stdout(view.table([value]));
  }

  return program;
}

/** A file the operator named; a missing one is a usage error, said without a stack. */
async function readInput(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${path}: ${code === "ENOENT" ? "no such file" : (code ?? "failed")}`);
  }
}
