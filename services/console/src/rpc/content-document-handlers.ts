import { create, toBinary } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { fileFieldPath } from "@testrun/content-file";
import {
  type CatalogService,
  ImportContentRequestSchema,
  ImportContentResponseSchema,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { serviceReadMaxBytes } from "@testrun/kit";
import type { Viewers } from "../viewer.js";
import { relay, relayed } from "./relay.js";

export interface ContentDocumentHandlerDeps {
  viewers: Viewers;
  catalog: Client<typeof CatalogService>;
}

/** The most test cases a content document holds (CatalogService.ImportContent's bound). */
const maxDocumentTestCases = 500;

/**
 * ConsoleService's content documents (docs/runs.md, "Content documents"): the web app writes and
 * reads the document's text with @testrun/content-file, as testrunctl does; these read the items
 * (test cases, plans, environments, variable names) for it and pass its items to
 * CatalogService.ImportContent as the signed-in member, which decides.
 */
export function contentDocumentHandlers(
  deps: ContentDocumentHandlerDeps,
): Pick<ServiceImpl<typeof ConsoleService>, "exportContent" | "importContent"> {
  const { viewers, catalog } = deps;

  return {
    async exportContent(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { projectId } = req;
      const [{ testCases, truncated }, { testPlans }, { environments }, { variables }] = await Promise.all([
        relay(catalog.listTestCases({ actor, projectId, includeSteps: true })),
        relay(catalog.listTestPlans({ actor, projectId })),
        relay(catalog.listEnvironments({ actor, projectId })),
        // Names only: the catalog never returns a value here.
        relay(catalog.listVariables({ actor, projectId })),
      ]);
      if (truncated)
        throw new ConnectError(
          `the project has more than ${maxDocumentTestCases} test cases, more than a content document holds`,
          Code.FailedPrecondition,
        );
      return { testCases, testPlans, environments, variableNames: variables.map((v) => v.name) };
    },

    async importContent(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const request = create(ImportContentRequestSchema, {
        actor,
        projectId: req.projectId,
        testCases: req.testCases,
        testPlans: req.testPlans,
        environments: req.environments,
        variables: req.variables,
        sourceProjectId: req.sourceProjectId,
        dryRun: req.dryRun,
      });
      // The console read up to this much; the actor it adds could take it past the catalog's bound.
      const bytes = toBinary(ImportContentRequestSchema, request).length;
      if (bytes > serviceReadMaxBytes)
        throw new ConnectError(
          `the document's items come to ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than an import takes (8 MiB): split it into several documents`,
          Code.InvalidArgument,
        );
      try {
        return { result: await catalog.importContent(request) };
      } catch (error) {
        throw inDocumentTerms(relayed(error));
      }
    },
  };
}

/**
 * The catalog's refusal of an import with its fields named as in the document
 * (`test_cases[3].steps[0].http.request.path` is `testCases[3].steps[0].http.path`), its preview
 * kept, and a message made of the first of them.
 */
function inDocumentTerms(failure: ConnectError): ConnectError {
  const violations = failure
    .findDetails(FieldViolationsSchema)
    .flatMap((detail) => detail.violations)
    .map((violation) => ({ field: fileFieldPath(violation.field), description: violation.description }));
  const [first] = violations;
  if (failure.code !== Code.InvalidArgument || !first) return failure;
  const [preview] = failure.findDetails(ImportContentResponseSchema);
  const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : "";
  return new ConnectError(`${first.field}: ${first.description}${more}`, Code.InvalidArgument, undefined, [
    { desc: FieldViolationsSchema, value: { violations } },
    ...(preview ? [{ desc: ImportContentResponseSchema, value: preview }] : []),
  ]);
}
