import { toJson } from "@bufbuild/protobuf";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { expect } from "chai";
import {
  importItemsOf,
  readContentDocument,
  type StoredTestCase,
  type StoredTestPlan,
  writeContentDocument,
} from "../src/content-document.js";
import { InputError } from "../src/input.js";
import { stepFromFile } from "../src/steps.js";
import { parseTestCaseFile } from "../src/test-case-file.js";

/** The message of the error `fn` throws. */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

const step = (path: string, extra: Record<string, unknown> = {}) =>
  stepFromFile({ name: `call ${path}`, http: { method: "GET", path }, ...extra }, "s");

/** A project's content as the catalog returns it: every kind of value the format holds. */
const testCases: StoredTestCase[] = [
  {
    id: "tc_01jd000000000000000000000a",
    name: "log in works",
    tags: ["smoke", "auth"],
    enabled: true,
    steps: [
      stepFromFile(
        {
          name: "log in",
          http: {
            method: "POST",
            path: "/api/login",
            headers: { "x-long": "a".repeat(300) },
            json: { user: "{{USER}}", list: [1, 2.5, null, { deep: true }], empty: {} },
            timeoutMs: 10000,
          },
          expect: { status: [200, 201], json: { "$.ok": true }, bodyContains: ["welcome"] },
          save: { token: "$.token" },
        },
        "s",
      ),
      stepFromFile(
        {
          name: "upload: a CSV",
          http: { method: "PUT", path: "/f", raw: "a,b\n1,2\n# not a comment\n" },
          expect: { status: 204 },
        },
        "s",
      ),
    ],
  },
  {
    id: "tc_01jd000000000000000000000b",
    name: "yes",
    tags: [],
    enabled: false,
    steps: [step("/no")],
  },
  // Two test cases of one name: plans must name them by id.
  { id: "tc_01jd000000000000000000000c", name: "Health", tags: [], enabled: true, steps: [step("/h1")] },
  { id: "tc_01jd000000000000000000000d", name: "health", tags: [], enabled: true, steps: [step("/h2")] },
  // A name that is another test case's id is written as the id too.
  {
    id: "tc_01jd000000000000000000000e",
    name: "tc_01jd000000000000000000000a",
    tags: ["odd"],
    enabled: true,
    steps: [step("/odd")],
  },
];
const testPlans: StoredTestPlan[] = [
  {
    id: "pln_01jd000000000000000000000a",
    name: "smoke",
    description: "Before every deploy.\nTwo lines.",
    testCaseIds: [
      "tc_01jd000000000000000000000b",
      "tc_01jd000000000000000000000a",
      "tc_01jd000000000000000000000c",
    ],
  },
  {
    id: "pln_01jd000000000000000000000b",
    name: "empty",
    description: "",
    testCaseIds: ["tc_01jd000000000000000000000e"],
  },
];

describe("content-file: content documents (a project's test cases and plans)", () => {
  for (const format of ["yaml", "json"] as const) {
    it(`reads back what it wrote, in ${format.toUpperCase()}: every item with its id, steps exact`, () => {
      const text = writeContentDocument({ testCases, testPlans }, format);
      const read = readContentDocument(text, format);
      expect(
        read.testCases.map(({ id, name, tags, enabled, path }) => ({ id, name, tags, enabled, path })),
      ).to.deep.equal([
        {
          id: testCases[0]?.id,
          name: "log in works",
          tags: ["smoke", "auth"],
          enabled: undefined,
          path: "testCases[0]",
        },
        { id: testCases[1]?.id, name: "yes", tags: [], enabled: false, path: "testCases[1]" },
        { id: testCases[2]?.id, name: "Health", tags: [], enabled: undefined, path: "testCases[2]" },
        { id: testCases[3]?.id, name: "health", tags: [], enabled: undefined, path: "testCases[3]" },
        {
          id: testCases[4]?.id,
          name: testCases[0]?.id,
          tags: ["odd"],
          enabled: undefined,
          path: "testCases[4]",
        },
      ]);
      read.testCases.forEach((testCase, index) => {
        expect(testCase.steps.map((s) => toJson(StepSchema, s))).to.deep.equal(
          testCases[index]?.steps.map((s) => toJson(StepSchema, s)),
        );
      });
      // Plans name a test case by its name where that is unambiguous, by its id otherwise.
      expect(read.testPlans).to.deep.equal([
        {
          id: "pln_01jd000000000000000000000a",
          name: "smoke",
          description: "Before every deploy.\nTwo lines.",
          testCases: ["yes", "log in works", "tc_01jd000000000000000000000c"],
          path: "testPlans[0]",
        },
        {
          id: "pln_01jd000000000000000000000b",
          name: "empty",
          description: "",
          testCases: ["tc_01jd000000000000000000000e"],
          path: "testPlans[1]",
        },
      ]);
      // Written twice, the same text: an unchanged project exports without a diff.
      expect(writeContentDocument({ testCases, testPlans }, format)).to.equal(text);
    });
  }

  it("writes YAML a person reviews: block style, long lines unfolded, multi-line text as a literal block", () => {
    const text = writeContentDocument({ testCases, testPlans }, "yaml");
    expect(text).to.match(/^testCases:\n {2}- id: tc_01jd000000000000000000000a\n {4}name: log in works\n/);
    expect(text).to.contain(`x-long: ${"a".repeat(300)}\n`);
    expect(text).to.contain("raw: |\n");
    // YAML 1.2, as the reader reads it: `yes` is text, not a boolean.
    expect(text).to.contain("name: yes\n");
    expect(text).to.contain("      - log in works\n");
  });

  it("reads a document without ids, tags, descriptions or plans, taking a single tag or case as a list", () => {
    const read = readContentDocument(
      [
        "testCases:",
        "  - name: ping",
        "    tags: solo",
        "    steps: [{ name: s, http: { method: GET, path: / } }]",
        "testPlans:",
        "  - name: p",
        "    testCases: ping",
        "  - name: empty",
      ].join("\n"),
      "yaml",
    );
    expect(read.testCases.map(({ id, name, tags }) => ({ id, name, tags }))).to.deep.equal([
      { id: undefined, name: "ping", tags: ["solo"] },
    ]);
    expect(read.testPlans).to.deep.equal([
      { name: "p", description: "", testCases: ["ping"], path: "testPlans[0]" },
      { name: "empty", description: "", testCases: [], path: "testPlans[1]" },
    ]);
    expect(readContentDocument('{"testPlans": []}', "json")).to.deep.equal({
      environments: [],
      variables: [],
      testCases: [],
      testPlans: [],
    });
  });

  it("carries the project it came from, its environments and its variables' names (never a value)", () => {
    const content = {
      projectId: "prj_01jd000000000000000000000a",
      environments: [
        { name: "staging", baseUrl: "https://staging.example.com", isDefault: true },
        { name: "local", baseUrl: "http://localhost:8080", isDefault: false },
      ],
      variableNames: ["API_TOKEN", "DEMO_PASSWORD"],
      testCases: testCases.slice(0, 1),
      testPlans: [],
    };
    const yaml = writeContentDocument(content, "yaml");
    // The project and settings first, a field at its default left out, then the test cases.
    expect(yaml).to.match(
      /^project: prj_01jd000000000000000000000a\nenvironments:\n {2}- name: staging\n {4}baseUrl: https:\/\/staging.example.com\n {4}isDefault: true\n {2}- name: local\n {4}baseUrl: http:\/\/localhost:8080\nvariables:\n {2}- API_TOKEN\n {2}- DEMO_PASSWORD\ntestCases:\n/,
    );
    for (const format of ["yaml", "json"] as const) {
      const read = readContentDocument(writeContentDocument(content, format), format);
      expect([read.project, read.environments, read.variables]).to.deep.equal([
        "prj_01jd000000000000000000000a",
        [
          {
            name: "staging",
            baseUrl: "https://staging.example.com",
            isDefault: true,
            path: "environments[0]",
          },
          { name: "local", baseUrl: "http://localhost:8080", isDefault: false, path: "environments[1]" },
        ],
        ["API_TOKEN", "DEMO_PASSWORD"],
      ]);
      const items = importItemsOf(read);
      expect([items.sourceProjectId, items.environments, items.variables]).to.deep.equal([
        "prj_01jd000000000000000000000a",
        [
          { name: "staging", baseUrl: "https://staging.example.com", isDefault: true },
          { name: "local", baseUrl: "http://localhost:8080", isDefault: false },
        ],
        ["API_TOKEN", "DEMO_PASSWORD"],
      ]);
    }
    // Without them (a hand-written file, or an export made before they were written): none.
    const bare = readContentDocument(writeContentDocument({ testCases, testPlans }, "yaml"), "yaml");
    expect([bare.project, bare.environments, bare.variables]).to.deep.equal([undefined, [], []]);
    expect(importItemsOf(bare)).to.not.have.property("sourceProjectId");
    // A document of environments or variables alone is a content document too.
    expect(readContentDocument("variables: [A]", "yaml").variables).to.deep.equal(["A"]);
    expect(parseTestCaseFile("environments: []", "yaml")).to.deep.equal([]);
  });

  it("names the field of the first mistake by its path in the document", () => {
    const cases: [string, string][] = [
      ["testCases: {}", "testCases: must be a list, not an object"],
      [
        "testCases: [{ name: a, steps: [], tag: x }]",
        "testCases[0].tag: unknown field; expected one of: id, name, tags, enabled, recordTrace, retries, steps, playwright",
      ],
      ["testCases: [{ id: 7, name: a, steps: [] }]", "testCases[0].id: must be a string, not number"],
      [
        "testCases: [{ name: a, steps: [{ name: s, http: { path: / } }] }]",
        "testCases[0].steps[0].http.method: is required",
      ],
      [
        "testPlans: [{ name: p, test_cases: [a] }]",
        'testPlans[0].test_cases: unknown field (did you mean "testCases"?)',
      ],
      ["testPlans: [{ name: p, testCases: [1] }]", "testPlans[0].testCases[0]: must be a string, not number"],
      ["testPlans: [{ testCases: [a] }]", "testPlans[0].name: is required"],
      [
        "testCases: []\nplans: []",
        "plans: unknown field; expected one of: project, environments, variables, testCases, testPlans",
      ],
      ["project: prj_1", "a content document holds testCases, testPlans, environments or variables"],
      ["{}", "a content document holds testCases, testPlans, environments or variables"],
      ["project: 7\ntestCases: []", "project: must be a string, not number"],
      ["environments: [{ name: e }]", "environments[0].baseUrl: is required"],
      [
        "environments: [{ name: e, base_url: http://x }]",
        'environments[0].base_url: unknown field (did you mean "baseUrl"?)',
      ],
      [
        "environments: [{ name: e, baseUrl: http://x, default: true }]",
        "environments[0].default: unknown field; expected one of: name, baseUrl, isDefault",
      ],
      [
        "environments: [{ name: e, baseUrl: http://x, isDefault: yes }]",
        "environments[0].isDefault: must be true or false, not string",
      ],
      [
        "variables: [{ API_TOKEN: hunter2 }]",
        "variables[0]: must be a variable's name: a document lists variables by name only, never with a value",
      ],
      ["variables: [A, 7]", "variables[1]: must be a string, not number"],
      ["", "the document: must be an object, not null"],
    ];
    for (const [text, message] of cases)
      expect(
        errorOf(() => readContentDocument(text, "yaml")),
        text,
      ).to.equal(message);
  });

  it("reads YAML anchors and aliases, but refuses an alias of itself and aliases that multiply a small file", () => {
    const shared =
      "testCases:\n  - name: a\n    steps: [&call {name: s, http: {method: GET, path: /}}]\n  - name: b\n    steps: [*call]\n";
    expect(readContentDocument(shared, "yaml").testCases.map((c) => c.steps.length)).to.deep.equal([1, 1]);
    // A JSON body that holds itself: without the check, a RangeError (stack overflow), not an InputError.
    const circular =
      "testCases:\n  - name: a\n    steps: [{name: s, http: {method: POST, path: /, json: &body {a: *body}}}]\n";
    expect(() => readContentDocument(circular, "yaml"))
      .to.throw(InputError)
      .with.property(
        "message",
        "not valid YAML: an alias refers to a value that holds it (a value cannot hold itself)",
      );
    // 2 MB of text aliased 20 times: 40 MB to hold and encode, more than any document may hold.
    const big = "x".repeat(2_000_000);
    let text = `testCases:\n  - name: c\n    steps: [{name: s, http: {method: POST, path: /, raw: &big "${big}"}}]\n`;
    for (let i = 0; i < 20; i++)
      text += `  - name: c${i}\n    steps: [{name: s, http: {method: POST, path: /, raw: *big}}]\n`;
    expect(() => readContentDocument(text, "yaml"))
      .to.throw(InputError)
      .with.property(
        "message",
        "not valid YAML: its aliases expand it to more than 33554432 characters of text (a document holds at most 8 MiB of items)",
      );
  });

  it("refuses a file of test cases alone, saying how to make it a document", () => {
    expect(errorOf(() => readContentDocument("[{ name: a, steps: [] }]", "yaml"))).to.equal(
      "the document is a list: a content document is an object whose testCases holds the test cases (and testPlans the plans)",
    );
    expect(errorOf(() => readContentDocument("name: a\nsteps: []", "yaml"))).to.equal(
      "the document is one test case: a content document is an object whose testCases holds the test cases (and testPlans the plans)",
    );
    expect(errorOf(() => readContentDocument("{", "json"))).to.match(/^not valid JSON: /);
  });

  it("carries recordTrace and browser steps through writing, reading and the import's items", () => {
    const browserCase: StoredTestCase = {
      id: "tc_01jd000000000000000000000f",
      name: "sign in in the browser",
      tags: [],
      enabled: true,
      recordTrace: true,
      steps: [
        step("/api/session"),
        stepFromFile({ name: "open", browser: { goto: { url: "/login" } } }, "s"),
        stepFromFile(
          {
            name: "wait",
            browser: { waitFor: { locator: { testId: "spinner" }, state: "hidden" }, timeoutMs: 3000 },
          },
          "s",
        ),
        stepFromFile({ name: "home", browser: { screenshot: { name: "home", fullPage: true } } }, "s"),
      ],
    };
    for (const format of ["yaml", "json"] as const) {
      const text = writeContentDocument({ testCases: [browserCase, ...testCases], testPlans: [] }, format);
      const read = readContentDocument(text, format);
      expect(read.testCases.map((c) => c.recordTrace)).to.deep.equal([
        true,
        false,
        false,
        false,
        false,
        false,
      ]);
      expect(read.testCases[0]?.steps.map((s) => toJson(StepSchema, s))).to.deep.equal(
        browserCase.steps.map((s) => toJson(StepSchema, s)),
      );
      const items = importItemsOf(read);
      expect(items.testCases?.map((c) => c.recordTrace)).to.deep.equal([
        true,
        false,
        false,
        false,
        false,
        false,
      ]);
    }
    const yaml = writeContentDocument({ testCases: [browserCase], testPlans: [] }, "yaml");
    expect(yaml).to.contain("    recordTrace: true\n");
    expect(yaml).to.contain("state: hidden\n");
    // Stored test cases without the field (written before it existed) read as false.
    expect(writeContentDocument({ testCases, testPlans }, "yaml")).to.not.contain("recordTrace");
  });

  it("carries retries of test cases and plans through writing, reading and the import's items", () => {
    const retried: StoredTestCase[] = [
      {
        id: "tc_01jd000000000000000000000r",
        name: "flaky one",
        tags: [],
        enabled: true,
        retries: 2,
        steps: [step("/a")],
      },
      {
        id: "tc_01jd000000000000000000000s",
        name: "steady one",
        tags: [],
        enabled: true,
        retries: 0,
        steps: [step("/b")],
      },
    ];
    const plans: StoredTestPlan[] = [
      {
        id: "pln_01jd00000000000000000000r1",
        name: "set",
        description: "",
        testCaseIds: [retried[0]?.id ?? ""],
        retries: 3,
      },
      { id: "pln_01jd00000000000000000000r2", name: "zero", description: "", testCaseIds: [], retries: 0 },
      { id: "pln_01jd00000000000000000000r3", name: "unset", description: "", testCaseIds: [] },
    ];
    for (const format of ["yaml", "json"] as const) {
      const read = readContentDocument(
        writeContentDocument({ testCases: retried, testPlans: plans }, format),
        format,
      );
      expect(
        read.testCases.map((c) => c.retries),
        format,
      ).to.deep.equal([2, 0]);
      expect(
        read.testPlans.map((p) => p.retries),
        format,
      ).to.deep.equal([3, 0, undefined]);
      const items = importItemsOf(read);
      expect(items.testCases?.map((c) => c.retries)).to.deep.equal([2, 0]);
      expect(items.testPlans?.map((p) => p.retries)).to.deep.equal([3, 0, undefined]);
    }
    const yaml = writeContentDocument({ testCases: retried, testPlans: plans }, "yaml");
    // A case's 0 is the default and left out; a plan's 0 is a setting of its own and written.
    expect(yaml.match(/retries: \d/g)).to.deep.equal(["retries: 2", "retries: 3", "retries: 0"]);
    for (const [text, message] of [
      [
        "testCases: [{ name: a, retries: 4, steps: [] }]",
        "testCases[0].retries: must be 0 to 3, how many times a failed attempt is run again, not 4",
      ],
      [
        "testCases: [{ name: a, retries: -1, steps: [] }]",
        "testCases[0].retries: must be 0 to 3, how many times a failed attempt is run again, not -1",
      ],
      [
        "testCases: [{ name: a, retries: x, steps: [] }]",
        "testCases[0].retries: must be a whole number, not string",
      ],
      ["testPlans: [{ name: p, retries: 1.5 }]", "testPlans[0].retries: must be a whole number, not 1.5"],
    ]) {
      expect(
        errorOf(() => readContentDocument(text as string, "yaml")),
        text,
      ).to.equal(message);
    }
  });

  it("is a test case file too: its test cases are read with their ids and paths", () => {
    const text = writeContentDocument({ testCases, testPlans }, "yaml");
    const read = parseTestCaseFile(text, "yaml");
    expect(read.map(({ id, name, path }) => ({ id, name, path }))).to.deep.equal(
      testCases.map(({ id, name }, index) => ({ id, name, path: `testCases[${index}]` })),
    );
    // The other forms take no id: it names a test case only in a project's document.
    expect(errorOf(() => parseTestCaseFile("id: tc_1\nname: a\nsteps: []", "yaml"))).to.equal(
      "id: unknown field; expected one of: name, tags, enabled, recordTrace, retries, steps, playwright",
    );
    expect(parseTestCaseFile("testPlans: []", "yaml")).to.deep.equal([]);
  });
});
