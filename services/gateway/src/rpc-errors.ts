import { Code, ConnectError } from "@connectrpc/connect";
import { AmbiguousNameSchema, InsufficientCreditsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { RunStartedSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { HttpError, internalError } from "./http-error.js";

/** Request fields as services name them (proto) -> as /v1 clients name them (JSON). */
const restFieldNames: Record<string, string> = {
  environment: "environment",
  test_plan: "testPlan",
  test_case_ids: "testCaseIds",
  tags: "tags",
};

/**
 * Where more credits come from, for the 402's message: neither a key nor a member of the project
 * can add any; an operator of the installation grants them (`testrunctl credits grant`).
 */
export const creditsFrom =
  "an operator of this Testrun installation grants credits (testrunctl credits grant): ask them for more";

/** Seconds a client is told to wait when a service is at one of its capacity bounds. */
export const capacityRetrySeconds = 5;

/**
 * The HTTP answer to a failed gRPC call of another service (docs/rest-api.md, "Errors").
 *
 * Services promise that their messages for the codes passed through here never carry a secret, so
 * a 4xx repeats the service's message: it is the explanation the client needs ("no such test
 * plan"). Everything else, including a code we do not expect from a read, becomes a bare 500: the
 * message of an INTERNAL or UNAVAILABLE error is about our insides, not the client's request, and
 * stays in our log. `expected: false` marks those, so the caller logs them.
 */
export function httpErrorFromRpc(error: unknown): { http: HttpError; expected: boolean } {
  if (!(error instanceof ConnectError)) return { http: internalError(), expected: false };
  const message = error.rawMessage;
  switch (error.code) {
    case Code.NotFound:
      return { http: new HttpError(404, "not_found", message), expected: true };
    case Code.PermissionDenied:
      return { http: new HttpError(403, "forbidden", message), expected: true };
    case Code.InvalidArgument:
      return { http: new HttpError(400, "invalid_request", message), expected: true };
    case Code.ResourceExhausted:
      // A capacity bound of the service (the runs service's WatchRun streams per replica): the
      // client is not at fault and nothing is broken, so it is told to come back, never a 500.
      return {
        http: new HttpError(
          429,
          "rate_limited",
          `${message}; retry in ${capacityRetrySeconds} s`,
          {},
          { "Retry-After": String(capacityRetrySeconds) },
          "waits_exhausted",
        ),
        expected: true,
      };
    case Code.Aborted: {
      const [ambiguous] = error.findDetails(AmbiguousNameSchema);
      if (!ambiguous) break;
      const field = restFieldNames[ambiguous.field] ?? ambiguous.field;
      return {
        http: new HttpError(
          409,
          "ambiguous_name",
          `the ${field} name "${ambiguous.name}" matches ${ambiguous.candidateIds.length} items; pass one of their ids instead`,
          { candidates: ambiguous.candidateIds },
        ),
        expected: true,
      };
    }
    case Code.FailedPrecondition: {
      const [credits] = error.findDetails(InsufficientCreditsSchema);
      if (!credits) break;
      const required = Number(credits.required);
      const available = Number(credits.available);
      return {
        http: new HttpError(
          402,
          "insufficient_credits",
          // Says who can help: no key and no member can add credits, only an operator.
          `not enough test-run credits: ${required} needed, ${available} available; ${creditsFrom}`,
          { required, available },
        ),
        expected: true,
      };
    }
    case Code.Internal: {
      // The run was started (and charged) but could not be read back: the client must follow
      // this run rather than post again (docs/rest-api.md, "Starting a run").
      const [started] = error.findDetails(RunStartedSchema);
      if (!started) break;
      return {
        http: new HttpError(
          500,
          "internal",
          "the run was started but could not be read back; follow it by its id",
          {
            id: started.runId,
            url: started.url,
          },
        ),
        expected: false,
      };
    }
  }
  return { http: internalError(), expected: false };
}
