import { toJson } from "@bufbuild/protobuf";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { expect } from "chai";
import { readTestCaseFile } from "../src/test-case-file.js";

/** The message of the error `fn` throws. */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

describe("cli: test case files (testrunctl case create --file)", () => {
  it("reads one test case from YAML", () => {
    const [testCase, ...rest] = readTestCaseFile(
      [
        "name: log in works",
        "tags: [smoke, auth]",
        "enabled: false",
        "steps:",
        "  - name: log in",
        "    http: { method: POST, path: /api/login, json: { user: '{{USER}}' } }",
        "    expect: { status: 200 }",
        "    save: { token: $.token }",
      ].join("\n"),
      "case.yaml",
    );
    expect(rest).to.deep.equal([]);
    expect(testCase?.name).to.equal("log in works");
    expect(testCase?.tags).to.deep.equal(["smoke", "auth"]);
    expect(testCase?.enabled).to.equal(false);
    expect(testCase?.path).to.equal("");
    expect(toJson(StepSchema, testCase?.steps[0] as never)).to.deep.equal({
      name: "log in",
      http: {
        request: { method: "POST", path: "/api/login", json: { user: "{{USER}}" } },
        expect: { status: [200] },
        save: { token: "$.token" },
      },
    });
  });

  it("reads a list from JSON, leaving enabled unset when not given", () => {
    const cases = readTestCaseFile(
      JSON.stringify([
        { name: "a", steps: [{ name: "s", http: { method: "GET", path: "/" } }] },
        { name: "b", tags: "solo", steps: [{ name: "s", http: { method: "GET", path: "/" } }] },
      ]),
      "cases.json",
    );
    expect(cases.map((c) => [c.name, c.tags, c.enabled, c.path])).to.deep.equal([
      ["a", [], undefined, "[0]"],
      ["b", ["solo"], undefined, "[1]"],
    ]);
  });

  it("names the file and the field's path in the list", () => {
    const file = JSON.stringify([
      { name: "a", steps: [{ name: "s", http: { method: "GET", path: "/" } }] },
      { name: "b", steps: [{ name: "s", http: { method: "GET" } }] },
    ]);
    expect(errorOf(() => readTestCaseFile(file, "cases.json"))).to.equal(
      "cases.json: [1].steps[0].http.path: is required",
    );
    expect(errorOf(() => readTestCaseFile('{"name": "x", "tag": ["a"], "steps": []}', "c.json"))).to.equal(
      "c.json: tag: unknown field; expected one of: name, tags, enabled, recordTrace, retries, steps, playwright",
    );
    expect(errorOf(() => readTestCaseFile("[]", "c.json"))).to.equal("c.json: the list holds no test case");
    expect(errorOf(() => readTestCaseFile("just text", "c.yaml"))).to.equal(
      "c.yaml: the document: must be an object, not string",
    );
  });

  it("says which syntax is broken, JSON by the .json extension and YAML otherwise", () => {
    expect(errorOf(() => readTestCaseFile("{ name: ", "c.json"))).to.match(/^c\.json: not valid JSON: /);
    expect(errorOf(() => readTestCaseFile("name: [unclosed", "c.yml"))).to.match(/^c\.yml: not valid YAML: /);
  });
});
