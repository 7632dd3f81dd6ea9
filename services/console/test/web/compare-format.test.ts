// The Compare view's wording (services/console/web/src/features/compare/compare-format.ts): a
// changed step read as the fields that differ instead of two JSON lines, the base's rule in words,
// and the changes in the URL.
import { TestChange } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { expect } from "chai";
import {
  baseRuleText,
  changeOfParam,
  changeParam,
  fieldChanges,
  stepName,
} from "../../web/src/features/compare/compare-format.js";

describe("the Compare view's wording", () => {
  it("lists only the fields of a step that differ, nested and in arrays, with the removed ones", () => {
    const before = JSON.stringify({
      name: "open",
      http: { method: "GET", path: "/health", headers: { accept: "text/plain" } },
      expect: { status: 200, bodyContains: ["ok", "up"] },
    });
    const after = JSON.stringify({
      name: "open",
      http: { method: "GET", path: "/health?deep=1" },
      expect: { status: 201, bodyContains: ["ok", "{{TOKEN}}"] },
    });
    expect(fieldChanges(before, after)).to.deep.equal([
      { path: "http.path", before: '"/health"', after: '"/health?deep=1"' },
      { path: "expect.status", before: "200", after: "201" },
      { path: "expect.bodyContains[1]", before: '"up"', after: '"{{TOKEN}}"' },
      { path: "http.headers.accept", before: '"text/plain"', after: "" },
    ]);
  });

  it("cuts a long value, saying how long it was, and takes a step that is not JSON whole", () => {
    const [change] = fieldChanges(JSON.stringify({ fill: "a".repeat(500) }), JSON.stringify({ fill: "b" }));
    expect(change?.before).to.match(/^"a{199}… \(502 characters\)$/);
    expect(fieldChanges("not json", "")).to.deep.equal([{ path: "(step)", before: '"not json"', after: "" }]);
  });

  it("names a step from its JSON, and nothing when it has no name", () => {
    expect(stepName(JSON.stringify({ name: "sign in", browser: {} }))).to.equal("sign in");
    expect(stepName(JSON.stringify({ browser: {} }))).to.equal("");
    expect(stepName("")).to.equal("");
  });

  it("says how the base was chosen", () => {
    expect(baseRuleText("previous", "staging", true)).to.equal("previous run on staging, same plan");
    expect(baseRuleText("previous", "staging", false)).to.equal("previous run on staging, same name");
    expect(baseRuleText("named", "staging", true)).to.equal("chosen as the base");
  });

  it("round-trips each change through the URL, and knows no other", () => {
    expect(changeParam(TestChange.NEWLY_FAILING)).to.equal("newly-failing");
    expect(changeOfParam("still-failing")).to.equal(TestChange.STILL_FAILING);
    expect(changeOfParam("new")).to.equal(TestChange.NEW_TEST);
    expect(changeOfParam("everything")).to.equal(undefined);
    expect(changeOfParam(null)).to.equal(undefined);
  });
});
