// Projects and environments (CatalogService).

import type { Environment, Project } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Command } from "commander";
import { parseText } from "../arguments.js";
import type { CommandKit } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { environmentView, projectView } from "../views.js";
import { allPages, required } from "./organizations.js";

export async function createProject(
  ctx: CliContext,
  input: { organizationId: string; name: string; description?: string },
): Promise<Project> {
  const { project } = await ctx.catalog.createProject({
    actor: ctx.actor,
    organizationId: input.organizationId,
    name: input.name,
    description: input.description ?? "",
  });
  return required(project, "project");
}

export function listProjects(ctx: CliContext, input: { organizationId: string }): Promise<Project[]> {
  return allPages(async (pageToken) => {
    const page = await ctx.catalog.listProjects({
      actor: ctx.actor,
      organizationId: input.organizationId,
      pageSize: 1000,
      pageToken,
    });
    return { items: page.projects, nextPageToken: page.nextPageToken };
  });
}

export async function createEnvironment(
  ctx: CliContext,
  input: { projectId: string; name: string; baseUrl: string; isDefault?: boolean },
): Promise<Environment> {
  const { environment } = await ctx.catalog.createEnvironment({
    actor: ctx.actor,
    projectId: input.projectId,
    name: input.name,
    baseUrl: input.baseUrl,
    isDefault: input.isDefault ?? false,
  });
  return required(environment, "environment");
}

export async function listEnvironments(
  ctx: CliContext,
  input: { projectId: string },
): Promise<Environment[]> {
  const { environments } = await ctx.catalog.listEnvironments({
    actor: ctx.actor,
    projectId: input.projectId,
  });
  return environments;
}

/** testrunctl's `project and env` commands. */
export function registerProjectCommands(
  program: Command,
  { ctx, leaf, print, printOne, projectOption, orgOption }: CommandKit,
): void {
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
}
