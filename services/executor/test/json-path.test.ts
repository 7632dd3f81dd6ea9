import { expect } from "chai";
import { evaluateJsonPath, JsonPathError, parseJsonPath } from "../src/steps/json-path.js";

describe("JSON path subset", () => {
  const doc = { token: "t", items: [{ id: 1 }, { id: 2, "a.b": [true] }], "it's": { '"q"': 0 }, nil: null };
  const at = (path: string) => evaluateJsonPath(doc, path);

  it("reads $, names, quoted names and indexes", () => {
    expect(at("$")).to.deep.equal({ found: true, value: doc });
    expect(at("$.token")).to.deep.equal({ found: true, value: "t" });
    expect(at("$.items[1].id")).to.deep.equal({ found: true, value: 2 });
    expect(at("$.items[1]['a.b'][0]")).to.deep.equal({ found: true, value: true });
    expect(at('$[\'it\\\'s\']["\\"q\\""]')).to.deep.equal({ found: true, value: 0 });
    expect(at("$.nil")).to.deep.equal({ found: true, value: null });
  });

  it("finds nothing past the end, in the wrong type, or for an inherited name", () => {
    for (const path of [
      "$.items[2]",
      "$.token.length",
      "$.items.id",
      "$.token[0]",
      "$.toString",
      "$.missing",
    ]) {
      expect(at(path), path).to.deep.equal({ found: false });
    }
  });

  it("refuses paths outside the subset", () => {
    for (const path of [
      "token",
      "$.",
      "$..id",
      "$.items[*]",
      "$.items[-1]",
      "$[?(@.id)]",
      "$.a b",
      "$['x]",
    ]) {
      expect(() => parseJsonPath(path), path).to.throw(JsonPathError);
    }
  });
});
