// Projects and environments (CatalogService).
import type { Environment, Project } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { CliContext } from "../context.js";
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
