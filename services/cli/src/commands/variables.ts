// Project variables (CatalogService). A value goes to the catalog and nowhere else: it is never
// returned, printed or put in an error.
import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { CliContext } from "../context.js";
import { CommandError } from "../errors.js";
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
