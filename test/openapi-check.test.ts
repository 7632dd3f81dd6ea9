import { expect } from "chai";
import { openApiProblems } from "./openapi-check.js";

/** The check the end-to-end suites run on every answer notices what it should. */
describe("answers checked against the OpenAPI document", () => {
  const keyed = () =>
    new Headers({
      "content-type": "application/json; charset=utf-8",
      "x-request-id": "4b0f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b",
      "cache-control": "no-store",
      "ratelimit-limit": "60",
      "ratelimit-remaining": "59",
      "ratelimit-reset": "60",
    });
  const environments = {
    environments: [
      { id: "env_01jd3k5q7x8y9z0a1b2c3d4e5g", name: "staging", baseUrl: "https://s", isDefault: true },
    ],
  };
  const check = (status: number, body: unknown, headers = keyed(), url = "/v1/environments") =>
    openApiProblems({ method: "GET", url, status, headers, text: JSON.stringify(body) });

  it("passes a conforming answer", () => {
    expect(check(200, environments)).to.deep.equal([]);
  });

  it("finds an extra field, a wrong type and a missing field", () => {
    const environment = environments.environments[0];
    expect(check(200, { environments: [{ ...environment, extra: 1 }] })).to.have.length(1);
    expect(check(200, { environments: [{ ...environment, isDefault: "yes" }] })).to.have.length(1);
    expect(check(200, {})).to.have.length(1);
  });

  it("finds a missing required header and a malformed one", () => {
    const missing = keyed();
    missing.delete("ratelimit-limit");
    expect(check(200, environments, missing).join()).to.contain("RateLimit-Limit missing");
    const malformed = keyed();
    malformed.set("ratelimit-remaining", "many");
    expect(check(200, environments, malformed).join()).to.contain("RateLimit-Remaining");
  });

  it("finds an undocumented status and an error body of the wrong shape or code", () => {
    expect(check(418, { error: "teapot", code: "internal" }).join()).to.contain("not documented");
    expect(check(404, { message: "gone" })).to.have.length(1);
    expect(check(404, { error: "gone", code: "rate_limited" })).to.have.length(1);
    expect(check(404, { error: "gone", code: "not_found" })).to.deep.equal([]);
  });

  it("checks undocumented /v1 paths for the error shape", () => {
    expect(check(404, { error: "no such path: /v1/x", code: "not_found" }, keyed(), "/v1/x")).to.deep.equal(
      [],
    );
    expect(check(404, { oops: true }, keyed(), "/v1/x")).to.have.length(1);
  });
});
