import { Code, ConnectError } from "@connectrpc/connect";
import type { ReserveOutcome } from "./store/artifacts.js";
import type {
  ClaimOutcome,
  CompleteOutcome,
  HeartbeatOutcome,
  ReleaseOutcome,
  SkipRunOutcome,
} from "./store/leases.js";

// The errors the runs service's handlers answer with. The store answers outcomes; what each
// refusal tells a caller (code and message, which executors act on) is decided here.

export const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

/** A run the caller named is not in its project (or does not exist at all: the caller cannot tell). */
export const runNotFound = () => new ConnectError("no such run in this project", Code.NotFound);

/**
 * An error of another service, passed on as it came (code, message, details), without the
 * transport metadata of the original call.
 */
export const passOn = (error: unknown): ConnectError => {
  const e = ConnectError.from(error);
  const out = new ConnectError(e.rawMessage, e.code);
  // Received details are kept as they came (type and bytes); the server re-encodes them as they are.
  out.details.push(...e.details);
  return out;
};

/** For every refusal of one call (by kind), the error its caller gets. */
type Refusals<Outcome extends { kind: string }> = {
  [Kind in Outcome["kind"]]: (outcome: Extract<Outcome, { kind: Kind }>) => ConnectError;
};

/** The error `refusals` gives for `outcome`. */
export const refusal = <Outcome extends { kind: string }>(
  refusals: Refusals<Outcome>,
  outcome: Outcome,
): ConnectError => (refusals[outcome.kind as Outcome["kind"]] as (outcome: Outcome) => ConnectError)(outcome);

const error = (code: Code, message: string) => () => new ConnectError(message, code);
const noSuchTest = error(Code.NotFound, "no such test result");

export const claimRefusals: Refusals<Exclude<ClaimOutcome, { kind: "claimed" }>> = {
  not_found: noSuchTest,
  final: error(Code.FailedPrecondition, "the test is final: drop it"),
  lease_held: error(Code.Aborted, "another executor holds the lease on this test"),
  gave_up: error(
    Code.FailedPrecondition,
    "the test failed: its executors stopped responding too often; drop it",
  ),
  over_share: error(
    Code.ResourceExhausted,
    "the project holds its share of the executors while other projects wait: the test stays queued and is published again later; take the next one",
  ),
};

export const heartbeatRefusals: Refusals<Exclude<HeartbeatOutcome, { kind: "extended" }>> = {
  not_found: noSuchTest,
  final: error(Code.FailedPrecondition, "the test is final: stop working on it"),
  not_current: error(Code.Aborted, "this claim is not the current one: stop working on the test"),
};

export const releaseRefusals: Refusals<Exclude<ReleaseOutcome, { kind: "released" }>> = {
  not_found: noSuchTest,
  final: error(Code.FailedPrecondition, "the test is final"),
  not_current: error(Code.Aborted, "this claim is not the current one"),
};

export const completeRefusals: Refusals<Exclude<CompleteOutcome, { kind: "completed" }>> = {
  not_found: noSuchTest,
  no_such_step: ({ steps }) => invalid(`failed_step must be at most ${steps}, the number of steps`),
  no_such_step_result: ({ steps }) =>
    invalid(`step_results must number steps from 1 to ${steps}, the number of steps`),
  final: error(Code.FailedPrecondition, "the test is already final: result discarded"),
  not_current: error(Code.Aborted, "this claim is not the current one: result discarded"),
};

export const skipRunRefusals: Refusals<Exclude<SkipRunOutcome, { kind: "skipped" }>> = {
  run_not_found: error(Code.NotFound, "no such run"),
  // The claim was settled with the finished run, so it is no longer the executor's to work on
  // (ABORTED), unlike a run whose tests ran (FAILED_PRECONDITION).
  run_finished: error(Code.Aborted, "the run already finished"),
  test_not_found: error(Code.NotFound, "no such test result in this run"),
  tests_ran: error(Code.FailedPrecondition, "a test of the run already passed or failed"),
  not_current: error(Code.Aborted, "this claim is not the current one"),
};

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/** An artifact the caller named is not there for it (unknown, expired, another project's: indistinguishable). */
export const artifactNotFound = () => new ConnectError("no such artifact", Code.NotFound);

export const putArtifactRefusals: Refusals<Exclude<ReserveOutcome, { kind: "reserved" }>> = {
  not_found: noSuchTest,
  final: error(Code.FailedPrecondition, "the test is final: artifact not stored"),
  not_current: error(Code.Aborted, "this claim is not the current one: artifact not stored"),
  no_such_step: ({ steps }) => invalid(`step must be at most ${steps}, the number of steps`),
  too_many: ({ max }) =>
    new ConnectError(
      `the test already has ${max} artifacts, the most one test keeps: artifact not stored`,
      Code.ResourceExhausted,
    ),
  run_full: ({ used, max }) =>
    new ConnectError(
      `the run's artifacts would exceed ${mib(max)} (${mib(used)} stored): artifact not stored`,
      Code.ResourceExhausted,
    ),
};
