import { expect } from "chai";
import { HttpError } from "../src/http-error.js";
import { parseRunsLimit, parseStartRunBody } from "../src/start-run-body.js";

const refusal = (work: () => unknown): HttpError => {
  try {
    work();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
};

describe("the start-run body", () => {
  it("takes exactly one selection, with environment and name passed on", () => {
    expect(parseStartRunBody({ testPlan: "Smoke", environment: "staging", name: "nightly" })).to.deep.equal({
      selection: { case: "testPlan", value: "Smoke" },
      environment: "staging",
      name: "nightly",
    });
    expect(parseStartRunBody({ tags: ["smoke", "Auth"] }).selection).to.deep.equal({
      case: "tags",
      value: { tags: ["smoke", "Auth"] },
    });
    expect(parseStartRunBody({ testCaseIds: ["tc_1"] }).selection).to.deep.equal({
      case: "testCaseIds",
      value: { ids: ["tc_1"] },
    });
  });

  it("refuses none or several selections with 400", () => {
    expect(refusal(() => parseStartRunBody({})).message).to.contain("none was given");
    const several = refusal(() => parseStartRunBody({ testPlan: "a", tags: ["b"] }));
    expect(several.status).to.equal(400);
    expect(several.message).to.contain("got testPlan, tags");
  });

  it("reports the first problem in a fixed order: unknown field, the selection rule, name, environment, the selection", () => {
    expect(refusal(() => parseStartRunBody({ testPlan: 7, tags: ["a"] })).message).to.contain(
      "got testPlan, tags",
    );
    expect(refusal(() => parseStartRunBody({ name: 5, testPlan: "a", tags: ["b"] })).message).to.contain(
      "got testPlan, tags",
    );
    expect(refusal(() => parseStartRunBody({ testplan: 1, name: 5 })).message).to.contain('"testplan"');
    expect(refusal(() => parseStartRunBody({ testPlan: 7, name: 5 })).message).to.equal(
      "name must be a string",
    );
    expect(refusal(() => parseStartRunBody({ testPlan: 7, environment: 5 })).message).to.equal(
      "environment must be a string",
    );
  });

  it("names an unknown field, so a typo is not silently ignored", () => {
    const error = refusal(() => parseStartRunBody({ testplan: "Smoke" }));
    expect(error.code).to.equal("invalid_request");
    expect(error.message).to.contain('unknown field "testplan"');
  });

  it("refuses a name over 200 characters, wrong types and empty lists", () => {
    expect(refusal(() => parseStartRunBody({ testPlan: "a", name: "x".repeat(201) })).message).to.contain(
      "200",
    );
    expect(parseStartRunBody({ testPlan: "a", name: "é".repeat(200) }).name).to.have.length(200);
    expect(refusal(() => parseStartRunBody({ testPlan: 7 })).message).to.equal("testPlan must be a string");
    expect(refusal(() => parseStartRunBody({ tags: [] })).message).to.contain("nothing to run");
    expect(refusal(() => parseStartRunBody({ testCaseIds: "tc_1" })).message).to.contain("array");
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `tc_${i}`);
    expect(refusal(() => parseStartRunBody({ testCaseIds: ids(501) })).message).to.contain("500");
    expect(refusal(() => parseStartRunBody({ tags: ids(501) })).message).to.contain("500");
  });

  it("counts duplicates once against the 500 bound, passes each entry on once, and takes null as not given", () => {
    const once = [...Array(300).keys()].map((i) => `tc_${i}`);
    const twice = [...once, ...once];
    expect(parseStartRunBody({ testCaseIds: twice }).selection.value).to.deep.equal({ ids: once });
    expect(parseStartRunBody({ tags: ["a", "b", "a", "a"] }).selection.value).to.deep.equal({
      tags: ["a", "b"],
    });
    expect(parseStartRunBody({ testPlan: "a", environment: null, name: null })).to.deep.equal({
      selection: { case: "testPlan", value: "a" },
    });
  });

  it("refuses more than 1000 entries, duplicates included, before anything else sees them", () => {
    for (const field of ["testCaseIds", "tags"]) {
      const atBound = refusal(() => parseStartRunBody({ [field]: Array(1001).fill("a") }));
      expect(atBound.status).to.equal(400);
      expect(atBound.message).to.equal(`${field} may hold at most 1000 entries, duplicates included`);
      expect(parseStartRunBody({ [field]: Array(1000).fill("a") }).selection.value).to.deep.equal(
        field === "tags" ? { tags: ["a"] } : { ids: ["a"] },
      );
    }
  });

  it("passes retries of 0 to 3 on, leaves them out when omitted or null, and refuses anything else with 400", () => {
    expect(parseStartRunBody({ testPlan: "a", retries: 2 }).retries).to.equal(2);
    expect(parseStartRunBody({ testPlan: "a", retries: 0 }).retries, "0 is a choice of its own").to.equal(0);
    expect(parseStartRunBody({ testPlan: "a", retries: null })).to.not.have.property("retries");
    expect(parseStartRunBody({ testPlan: "a" })).to.not.have.property("retries");
    for (const retries of [4, -1, 1.5, "x", "2", true]) {
      const refused = refusal(() => parseStartRunBody({ testPlan: "a", retries }));
      expect([refused.status, refused.code, refused.message], JSON.stringify(retries)).to.deep.equal([
        400,
        "invalid_request",
        "retries must be a whole number from 0 to 3",
      ]);
    }
  });
});

describe("the runs list limit", () => {
  it("defaults to 20, caps at 100, and refuses anything not a whole number of at least 1", () => {
    expect(parseRunsLimit(undefined)).to.equal(20);
    expect(parseRunsLimit("5")).to.equal(5);
    expect(parseRunsLimit("1000")).to.equal(100);
    for (const bad of ["0", "-1", "2.5", "ten", "", ["1", "2"]]) {
      expect(refusal(() => parseRunsLimit(bad)).status, String(bad)).to.equal(400);
    }
  });
});
