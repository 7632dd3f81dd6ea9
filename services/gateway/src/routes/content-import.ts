// POST /v1/content/import: a pipeline pushes a project's content (docs/rest-api.md, "Importing
// content"). The one route a content token opens, and one no API key opens: content is changed by
// members, so the token acts as the member who created it, with that member's rights at the moment
// of the import (the catalog checks them, as it does for the console).
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type Router from "@koa/router";
import { contentDocumentFromFile, fileFieldPath, InputError, importItemsOf } from "@testrun/content-file";
import {
  ImportContentRequestSchema,
  type ImportContentResponse,
  type ImportedItem,
  ItemOutcome,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { serviceReadMaxBytes } from "@testrun/kit";
import { type Authenticator, contentTokenCreatorLostRights } from "../auth.js";
import { callOptions, type GatewayContext, type GatewayState } from "../context.js";
import { HttpError } from "../http-error.js";
import { httpErrorFromRpc } from "../rpc-errors.js";
import type { V1Deps } from "./deps.js";
import { jsonBody } from "./v1.js";

/** The route's path. */
export const contentImportPath = "/v1/content/import";

/**
 * The largest document accepted: what the catalog takes in one call (its items are sent as one
 * ImportContent request), larger than the 1 MiB of the other routes because a project's specs
 * and their helper files travel in it.
 */
export const maxImportBodyBytes = serviceReadMaxBytes;

const outcomes: Record<ItemOutcome, string> = {
  [ItemOutcome.UNSPECIFIED]: "unknown",
  [ItemOutcome.CREATED]: "created",
  [ItemOutcome.CHANGED]: "changed",
  [ItemOutcome.UNCHANGED]: "unchanged",
};

const itemJson = (item: ImportedItem) => ({
  path: item.path,
  name: item.name,
  ...(item.id && { id: item.id }),
  outcome: outcomes[item.outcome],
  ...(item.changedFields.length > 0 && { changedFields: item.changedFields }),
});

/** What the import did (or, for a dry run, would do), item by item, in the document's terms. */
export const importJson = (response: ImportContentResponse) => ({
  applied: response.applied,
  testCases: response.testCases.map(itemJson),
  testPlans: response.testPlans.map(itemJson),
  environments: response.environments.map(itemJson),
  variables: response.variables.map(itemJson),
  variablesWithoutValue: response.variablesWithoutValue,
  otherTestCases: response.otherTestCases,
  otherTestPlans: response.otherTestPlans,
});

/** `?dryRun=true|false`, nothing else. */
function dryRunOf(ctx: GatewayContext): boolean {
  const unknown = Object.keys(ctx.query).filter((name) => name !== "dryRun");
  if (unknown.length > 0)
    throw new HttpError(
      400,
      "invalid_request",
      `unknown query parameter "${unknown[0]}": only dryRun is taken`,
    );
  const value = ctx.query.dryRun;
  if (value === undefined) return false;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new HttpError(400, "invalid_request", 'dryRun must be "true" or "false"');
}

/** An item's path in a catalog message: `test_cases[1]`, `test_plans[0].test_cases[2]`. */
const itemPath = /\b[a-z]+(?:_[a-z]+)*\[\d+\][\w.[\]]*/g;

/** The catalog's refusal of the document, its fields named as the document names them. */
function importRefusal(error: unknown): { http: HttpError; expected: boolean } {
  const e = error instanceof ConnectError ? error : undefined;
  // The catalog checked the member the token acts for: removed, made Viewer, or another
  // organization's by now. Said as what it means for the token.
  if (e?.code === Code.PermissionDenied) return { http: contentTokenCreatorLostRights(), expected: true };
  if (e?.code === Code.InvalidArgument) {
    const [details] = e.findDetails(FieldViolationsSchema);
    return {
      // The catalog names items as its request does (`test_cases[1]`); the client wrote a document.
      http: new HttpError(
        400,
        "invalid_request",
        `nothing was imported: ${e.rawMessage.replace(itemPath, fileFieldPath)}`,
        {
          violations: (details?.violations ?? []).map((v) => ({
            field: fileFieldPath(v.field),
            problem: v.description,
          })),
        },
      ),
      expected: true,
    };
  }
  return httpErrorFromRpc(error);
}

/**
 * Registers the content import. The token is checked from the headers before a byte of the body
 * is read (as the /v1 routes check keys), then the document is read, checked field by field
 * (400 naming the field), and imported into the token's project as its creator.
 */
export function contentImportRoute(
  router: Router<GatewayState>,
  deps: { auth: Authenticator; catalog: Pick<V1Deps["catalog"], "importContent"> },
): void {
  router.post(
    "importContent",
    contentImportPath,
    deps.auth.requireContentToken(),
    jsonBody(true, maxImportBodyBytes),
    async (ctx) => {
      const token = ctx.state.contentToken;
      if (!token) throw new Error("content import reached without a content token");
      const dryRun = dryRunOf(ctx);
      let items: ReturnType<typeof importItemsOf>;
      try {
        items = importItemsOf(contentDocumentFromFile(ctx.request.body));
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        throw new HttpError(400, "invalid_request", `nothing was imported: ${error.message}`, {
          violations: [{ field: error.path, problem: error.problem }],
        });
      }
      const request = create(ImportContentRequestSchema, {
        actor: { kind: { case: "memberId", value: token.creatorMemberId } },
        projectId: token.projectId,
        ...items,
        dryRun,
      });
      // The catalog takes at most this much in one call; past it the document must be split.
      const bytes = toBinary(ImportContentRequestSchema, request).length;
      if (bytes > serviceReadMaxBytes)
        throw new HttpError(
          413,
          "payload_too_large",
          `the document's items come to ${bytes} bytes, more than the ${serviceReadMaxBytes} one import takes; split it into several documents`,
        );
      let response: ImportContentResponse;
      try {
        response = await deps.catalog.importContent(request, callOptions(ctx));
      } catch (error) {
        const { http, expected } = importRefusal(error);
        if (!expected) ctx.state.log.error({ err: error }, "content import failed");
        throw http;
      }
      ctx.state.log.info(
        { tokenId: token.tokenId, projectId: token.projectId, applied: response.applied },
        "content imported",
      );
      ctx.body = importJson(response);
    },
  );
}
