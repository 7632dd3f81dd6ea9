// Project variables (CatalogService). A value goes to the catalog and nowhere else: it is never
// returned, printed or put in an error.

import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Command } from "commander";
import { parseText, variableValue } from "../arguments.js";
import type { CommandKit } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { CommandError } from "../errors.js";
import { jsonText } from "../output.js";
import { variableView } from "../views.js";
import { required } from "./organizations.js";

/**
 * Creates the variable, or replaces the value of the project's variable of that name (ignoring
 * letter case, as the catalog compares names). `created` tells which happened.
 */
export async function setVariable(
  ctx: CliContext,
  input: { projectId: string; name: string; value: string },
): Promise<{ variable: Variable; created: boolean }> {
  const existing = await findVariable(ctx, input.projectId, input.name);
  if (existing) {
    const { variable } = await ctx.catalog.updateVariable({
      actor: ctx.actor,
      projectId: input.projectId,
      variableId: existing.id,
      value: input.value,
    });
    return { variable: required(variable, "variable"), created: false };
  }
  const { variable } = await ctx.catalog.createVariable({
    actor: ctx.actor,
    projectId: input.projectId,
    name: input.name,
    value: input.value,
  });
  return { variable: required(variable, "variable"), created: true };
}

export async function listVariables(ctx: CliContext, input: { projectId: string }): Promise<Variable[]> {
  const { variables } = await ctx.catalog.listVariables({ actor: ctx.actor, projectId: input.projectId });
  return variables;
}

/** Deletes a variable given by id or name; returns it as it was. */
export async function deleteVariable(
  ctx: CliContext,
  input: { projectId: string; variable: string },
): Promise<Variable> {
  const variable = await findVariable(ctx, input.projectId, input.variable);
  if (!variable) throw new CommandError(`the project has no variable "${input.variable}"`);
  await ctx.catalog.deleteVariable({ actor: ctx.actor, projectId: input.projectId, variableId: variable.id });
  return variable;
}

/** The variable whose id is `reference`, or else whose name equals it ignoring letter case. */
async function findVariable(ctx: CliContext, projectId: string, reference: string) {
  const variables = await listVariables(ctx, { projectId });
  return (
    variables.find((variable) => variable.id === reference) ??
    variables.find((variable) => variable.name.toLowerCase() === reference.toLowerCase())
  );
}

/** testrunctl's `var` commands. */
export function registerVariableCommands(
  program: Command,
  { io, ctx, secrets, leaf, print, printOne, projectOption }: CommandKit,
): void {
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
}
