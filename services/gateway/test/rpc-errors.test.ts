import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  AmbiguousNameSchema,
  FieldViolationsSchema,
  InsufficientCreditsSchema,
} from "@testrun/gen/testrun/common/v1/errors_pb";
import { expect } from "chai";
import { httpErrorFromRpc } from "../src/rpc-errors.js";

describe("gateway: gRPC errors of services -> HTTP errors of /v1", () => {
  const map = (error: unknown) => {
    const { http, expected } = httpErrorFromRpc(error);
    return { status: http.status, code: http.code, message: http.message, extra: http.extra, expected };
  };

  it("NOT_FOUND -> 404 not_found with the service's message", () => {
    expect(map(new ConnectError('no test plan named "Smoke"', Code.NotFound))).to.deep.equal({
      status: 404,
      code: "not_found",
      message: 'no test plan named "Smoke"',
      extra: {},
      expected: true,
    });
  });

  it("PERMISSION_DENIED -> 403 forbidden", () => {
    const mapped = map(new ConnectError("the key's creator can no longer start runs", Code.PermissionDenied));
    expect(mapped).to.include({
      status: 403,
      code: "forbidden",
      message: "the key's creator can no longer start runs",
    });
  });

  it("INVALID_ARGUMENT -> 400 invalid_request, with or without field violations", () => {
    expect(map(new ConnectError("nothing to run", Code.InvalidArgument))).to.include({
      status: 400,
      code: "invalid_request",
      message: "nothing to run",
    });
    const detailed = new ConnectError("tags[0]: too long", Code.InvalidArgument, undefined, [
      { desc: FieldViolationsSchema, value: { violations: [{ field: "tags[0]", description: "too long" }] } },
    ]);
    expect(map(detailed)).to.include({ status: 400, code: "invalid_request" });
  });

  it("ABORTED with AmbiguousName -> 409 ambiguous_name with the candidate ids, fields named as in /v1", () => {
    const error = new ConnectError("ambiguous", Code.Aborted, undefined, [
      {
        desc: AmbiguousNameSchema,
        value: { field: "test_plan", name: "Smoke", candidateIds: ["pln_a", "pln_b"] },
      },
    ]);
    const mapped = map(error);
    expect(mapped).to.include({ status: 409, code: "ambiguous_name", expected: true });
    expect(mapped.extra).to.deep.equal({ candidates: ["pln_a", "pln_b"] });
    expect(mapped.message).to.contain("testPlan").and.contain('"Smoke"').and.contain("id");
  });

  it("FAILED_PRECONDITION with InsufficientCredits -> 402 insufficient_credits with required and available as numbers", () => {
    const error = new ConnectError("not enough credits", Code.FailedPrecondition, undefined, [
      { desc: InsufficientCreditsSchema, value: { required: 12n, available: 3n } },
    ]);
    const mapped = map(error);
    expect(mapped).to.include({ status: 402, code: "insufficient_credits" });
    expect(mapped.extra).to.deep.equal({ required: 12, available: 3 });
    // No key and no member can add credits: the message says who can.
    expect(mapped.message).to.equal(
      "not enough test-run credits: 12 needed, 3 available; an operator of this Testrun installation grants credits (testrunctl credits grant): ask them for more",
    );
  });

  it("decodes details that came over the wire (binary Any values), as a gRPC client receives them", () => {
    // What connect-node hands us for a detail of grpc-status-details-bin: a type name and bytes.
    const detail = create(AmbiguousNameSchema, {
      field: "environment",
      name: "staging",
      candidateIds: ["env_1", "env_2"],
    });
    const received = new ConnectError("ambiguous", Code.Aborted);
    received.details.push({
      type: AmbiguousNameSchema.typeName,
      value: toBinary(AmbiguousNameSchema, detail),
    });
    expect(map(received).extra).to.deep.equal({ candidates: ["env_1", "env_2"] });
    expect(map(received).message).to.contain("environment");
  });

  it("RESOURCE_EXHAUSTED (a service at capacity) -> 429 rate_limited with Retry-After, never 500", () => {
    const { http, expected } = httpErrorFromRpc(
      new ConnectError(
        "this replica watches as many runs as it may; call again later",
        Code.ResourceExhausted,
      ),
    );
    expect({ status: http.status, code: http.code, expected }).to.deep.equal({
      status: 429,
      code: "rate_limited",
      expected: true,
    });
    expect(http.message).to.equal(
      "this replica watches as many runs as it may; call again later; retry in 5 s",
    );
    expect(http.headers).to.deep.equal({ "Retry-After": "5" });
  });

  it("ABORTED or FAILED_PRECONDITION without their detail -> 500 internal", () => {
    expect(map(new ConnectError("conflict", Code.Aborted))).to.include({ status: 500, code: "internal" });
    expect(map(new ConnectError("run finished", Code.FailedPrecondition))).to.include({
      status: 500,
      expected: false,
    });
  });

  for (const code of [
    Code.Internal,
    Code.Unavailable,
    Code.DeadlineExceeded,
    Code.Unauthenticated,
    Code.Unimplemented,
    Code.Unknown,
  ]) {
    it(`${Code[code]} -> 500 internal without the service's message`, () => {
      const mapped = map(new ConnectError("pg: relation catalog.test_case does not exist (host db-1)", code));
      expect(mapped).to.deep.equal({
        status: 500,
        code: "internal",
        message: "internal error",
        extra: {},
        expected: false,
      });
    });
  }

  it("anything that is not a gRPC error -> 500 internal", () => {
    expect(map(new TypeError("x is undefined"))).to.deep.include({ status: 500, message: "internal error" });
    expect(map("thrown string")).to.include({ status: 500, code: "internal" });
  });
});
