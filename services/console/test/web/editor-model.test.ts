// The test case editor's model (services/console/web/src/features/step-editor and test-cases): the
// form's draft to the catalog's messages and back without loss, the JSON view through
// @testrun/content-file, `{{NAME}}` references checked against variables and EARLIER steps' saved
// values, and the catalog's FieldViolation paths put at the form's fields.
import { create, toBinary, toJson, toJsonString } from "@bufbuild/protobuf";
import { TestCaseSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { FieldViolationSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import {
  CreateTestCaseRequestSchema,
  UpdateTestCaseRequestSchema,
} from "@testrun/gen/testrun/console/v1/console_pb";
import { expect } from "chai";
import {
  type CaseDraft,
  caseOfDraft,
  copyName,
  draftOfCase,
  emptyCase,
  type StepDraft,
} from "../../web/src/features/step-editor/kinds.js";
import { draftOfJson, jsonOfDraft, snapshotOf } from "../../web/src/features/test-cases/json-view.js";
import { referencesIn, referenceWarnings } from "../../web/src/features/test-cases/references.js";
import { saveSizeProblem } from "../../web/src/features/test-cases/save-size.js";
import {
  fieldOfPath,
  stillAtSentValues,
  violationMessages,
} from "../../web/src/features/test-cases/violations.js";

/** A case with every field of the HTTP step format set somewhere (docs/runs.md). */
const file = {
  name: "log in and read the profile",
  tags: ["smoke", "auth"],
  enabled: false,
  steps: [
    {
      name: "log in",
      http: {
        method: "POST",
        path: "/api/login",
        headers: { "X-Trace": "t-1", Accept: "application/json" },
        query: { lang: "en" },
        timeoutMs: 5000,
        json: { user: "{{DEMO_USER}}", password: "{{DEMO_PASSWORD}}", remember: true, n: [1, 2.5, null] },
      },
      expect: {
        status: [200, 201],
        headers: { "content-type": "application/json" },
        bodyContains: ["welcome", ""],
        bodyNotContains: ["error"],
        json: { "$.ok": true, "$.user['name']": "demo", "$.items[0]": { a: 1 } },
        maxDurationMs: 2000,
      },
      save: { token: "$.token" },
    },
    {
      name: "upload",
      http: {
        method: "PUT",
        path: "/files/{{token}}",
        headers: { "Content-Type": "text/csv" },
        raw: "a,b\n1,2",
      },
      expect: {},
    },
    { name: "read", http: { method: "GET", path: "/api/profile" } },
  ],
};

const jsonOf = (draft: CaseDraft) => {
  const written = jsonOfDraft(draft);
  if (!("text" in written)) throw new Error(`not writable: ${[...written.problems.values()].join(" ")}`);
  return written.text;
};
const anyDraftOf = (text: string) => {
  const read = draftOfJson(text);
  if ("error" in read) throw new Error(read.error);
  return read.draft;
};
type HttpStepDraft = Extract<StepDraft, { kind: "http" }>;
/** A case of HTTP steps only (as `file`), typed so. */
const draftOf = (text: string) => {
  const draft = anyDraftOf(text);
  const steps = draft.steps.filter((step): step is HttpStepDraft => step.kind === "http");
  if (steps.length !== draft.steps.length) throw new Error("not HTTP steps only");
  return { ...draft, steps };
};

describe("console editor: the draft, the catalog's messages and the JSON view", () => {
  it("reads every field of the file format into the form and writes it back exactly", () => {
    const text = `${JSON.stringify(file, null, 2)}\n`;
    const draft = draftOf(text);
    const [login, upload, read] = draft.steps;
    expect(draft).to.include({ name: file.name, enabled: false });
    expect(draft.tags).to.deep.equal(["smoke", "auth"]);
    expect(login?.draft).to.deep.include({
      method: "POST",
      path: "/api/login",
      body: "json",
      timeoutMs: "5000",
      query: [{ name: "lang", value: "en" }],
      headers: [
        { name: "X-Trace", value: "t-1" },
        { name: "Accept", value: "application/json" },
      ],
      save: [{ name: "token", value: "$.token" }],
    });
    expect(login?.draft.expect).to.deep.equal({
      given: true,
      status: "200, 201",
      headers: [{ name: "content-type", value: "application/json" }],
      bodyContains: ["welcome", ""],
      bodyNotContains: ["error"],
      json: [
        { name: "$.ok", value: "true" },
        { name: "$.user['name']", value: '"demo"' },
        { name: "$.items[0]", value: '{"a":1}' },
      ],
      maxDurationMs: "2000",
    });
    expect(upload?.draft).to.deep.include({ body: "raw", raw: "a,b\n1,2" });
    expect(upload?.draft.expect.given, "an empty expect is kept").to.equal(true);
    expect(read?.draft.expect.given).to.equal(false);
    // Form -> JSON gives back the text it was read from, key order included.
    expect(jsonOf(draft)).to.equal(text);
  });

  it("keeps what the catalog returned: a stored test case through the form is the same test case", () => {
    const stored = create(TestCaseSchema, {
      name: "x",
      tags: ["a"],
      enabled: true,
      steps: caseOfDraft(draftOf(JSON.stringify(file))).value.steps,
    });
    const { draft, unknownKinds } = draftOfCase(stored);
    expect(unknownKinds).to.equal(0);
    const { value, problems } = caseOfDraft(draft);
    expect(problems.size).to.equal(0);
    expect(value.steps.map((step) => toJson(StepSchema, step))).to.deep.equal(
      stored.steps.map((step) => toJson(StepSchema, step)),
    );
  });

  it("carries a test case's retries from the catalog, through the form and the JSON view, to what is saved", () => {
    const stored = create(TestCaseSchema, { name: "x", tags: [], enabled: true, retries: 2, steps: [] });
    const { draft } = draftOfCase(stored);
    expect(draft.retries).to.equal(2);
    expect(caseOfDraft(draft).value.retries).to.equal(2);
    const text = jsonOf(draft);
    expect(JSON.parse(text)).to.include({ retries: 2 });
    expect(anyDraftOf(text).retries).to.equal(2);
    // 0 is the default: the file leaves it out, and a file without it reads as 0.
    expect(JSON.parse(jsonOf({ ...draft, retries: 0 }))).to.not.have.property("retries");
    expect(emptyCase().retries).to.equal(0);
    expect(draftOfJson(JSON.stringify({ name: "x", steps: [], retries: 5 }))).to.deep.equal({
      error: "retries: must be 0 to 3, how many times a failed attempt is run again, not 5",
    });
  });

  it("says what the form cannot write, at its field, and writes nothing of it", () => {
    const draft = draftOf(JSON.stringify(file));
    const [login, upload] = draft.steps;
    if (!login || !upload) throw new Error("steps missing");
    login.draft.json = '{"user": ';
    login.draft.expect.status = "200, 20x";
    login.draft.timeoutMs = "ten";
    login.draft.headers.push({ name: "accept", value: "text/html" });
    login.draft.expect.json.push({ name: "$.flag", value: "yes" });
    upload.draft.save.push({ name: "id", value: "$.id" }, { name: "id", value: "$.other" });
    const written = jsonOfDraft(draft);
    if (!("problems" in written)) throw new Error("expected problems");
    const at = (field: string) => written.problems.get(field);
    expect(at(`${login.key}:request.json`)).to.match(/^Not valid JSON: /);
    expect(at(`${login.key}:expect.status`)).to.equal(
      "“20x” is not a status code: write numbers separated by commas, e.g. 200, 201.",
    );
    expect(at(`${login.key}:request.timeoutMs`)).to.equal(
      "Must be a whole number of milliseconds, e.g. 5000.",
    );
    expect(at(`${login.key}:request.headers#2`)).to.equal(
      "Header 2 is “accept” too (names ignore letter case): rename or remove one.",
    );
    expect(at(`${login.key}:expect.json#3`)).to.match(/^The expected value is not JSON .*double quotes/);
    expect(at(`${upload.key}:save#1`)).to.equal("Saved value 1 is “id” too: rename or remove one.");
    expect(written.problems.size).to.equal(6);
  });

  it("reads back an invalid JSON text as an error naming the line or the field, never as a draft", () => {
    const broken = '{\n  "name": "x",\n}';
    expect(draftOfJson(broken)).to.deep.equal({ error: `Not valid JSON: ${errorOfParse(broken)}` });
    expect(errorOfParse(broken), "the parser says where").to.match(/line 3 column 1/);
    expect(
      draftOfJson(JSON.stringify({ name: "x", steps: [{ name: "a", http: { method: 1, path: "/" } }] })),
    ).to.deep.equal({ error: "steps[0].http.method: must be a string, not number" });
    expect(draftOfJson(JSON.stringify({ name: "x", steps: [], colour: "red" }))).to.deep.equal({
      error:
        "colour: unknown field; expected one of: name, tags, enabled, recordTrace, retries, steps, playwright",
    });
  });

  it("tells a changed draft from an unchanged one by what would be saved", () => {
    const draft = draftOf(JSON.stringify(file));
    const before = snapshotOf(draft);
    const login = draft.steps[0];
    if (!login) throw new Error("no step");
    // Another layout of the same JSON body is no change.
    login.draft.json = JSON.stringify(JSON.parse(login.draft.json));
    expect(snapshotOf(draft)).to.equal(before);
    login.draft.json = '{"user": ';
    expect(snapshotOf(draft)).not.to.equal(before);
  });
});

function errorOfParse(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  return "";
}

describe("console editor: {{NAME}} references", () => {
  const draft = () => draftOf(JSON.stringify(file));

  it("finds names as the executor does: letters, digits and _, not starting with a digit", () => {
    expect(referencesIn("Bearer {{token}} {{A_1}} {{token}} {{ spaced }} {{1x}} {{a-b}}")).to.deep.equal([
      "token",
      "A_1",
    ]);
  });

  it("knows a project variable and a value saved by an EARLIER step; warns where anything else is named", () => {
    const d = draft();
    const [login, upload, read] = d.steps;
    if (!login || !upload || !read) throw new Error("steps missing");
    // Variables DEMO_USER and DEMO_PASSWORD exist; token is saved by step 1 and used by step 2.
    expect(referenceWarnings(d, ["DEMO_USER", "DEMO_PASSWORD"]).size).to.equal(0);

    read.draft.headers.push({ name: "Authorization", value: "Bearer {{tokn}}" });
    read.draft.save.push({ name: "me", value: "$.id" });
    read.draft.path = "/api/{{me}}";
    login.draft.expect.bodyContains.push("{{demo_user}}");
    upload.draft.raw = "{{ token }}";
    const warnings = referenceWarnings(d, ["DEMO_USER", "DEMO_PASSWORD"]);
    expect(Object.fromEntries(warnings)).to.deep.equal({
      [`${read.key}:request.headers#0`]:
        "{{tokn}} is not a project variable or a value saved by an earlier step: the step fails unless a variable named tokn is added before the test runs.",
      [`${read.key}:request.path`]:
        "{{me}} is saved by this step, after its request: only later steps can use it.",
      [`${login.key}:expect.bodyContains#2`]:
        "{{demo_user}} is unknown (names are case-sensitive): did you mean {{DEMO_USER}}?",
      [`${upload.key}:request.raw`]:
        "{{ token }} is sent as written: a reference is {{NAME}}, letters, digits and _ without spaces.",
    });
  });

  it("warns when a step uses a value saved only by a later step, and when a variable is missing", () => {
    const d = draft();
    const [login, upload] = d.steps;
    if (!login || !upload) throw new Error("steps missing");
    d.steps = [upload, login, ...d.steps.slice(2)];
    const warnings = referenceWarnings(d, ["DEMO_USER"]);
    expect(warnings.get(`${upload.key}:request.path`)).to.equal(
      "{{token}} is saved by step 2, which runs after this one: move that step up.",
    );
    // Only string values of a JSON body are looked at (keys are not interpolated).
    expect(warnings.get(`${login.key}:request.json`)).to.match(
      /^\{\{DEMO_PASSWORD\}\} is not a project variable/,
    );
    expect(warnings.size).to.equal(2);
  });

  it("says nothing of unknown names while the variables are not read yet", () => {
    const d = draft();
    const read = d.steps[2];
    if (!read) throw new Error("no step");
    read.draft.path = "/{{anything}}";
    expect(referenceWarnings(d, undefined).size).to.equal(0);
  });
});

describe("console editor: the catalog's FieldViolations at the form's fields", () => {
  const sent = () => {
    const d = draftOf(JSON.stringify(file));
    const login = d.steps[0];
    if (login) login.draft.expect.status = "200, 201, 700";
    return d;
  };
  const violation = (field: string, description: string) =>
    create(FieldViolationSchema, { field, description });

  it("maps every path the catalog's validator names, created or updated", () => {
    const d = sent();
    const [login, upload] = d.steps.map((step) => step.key);
    const cases: [string, string, string?][] = [
      ["name", "name"],
      ["tags", "tags"],
      ["tags[1]", "tags", "“auth”: "],
      ["tags.tags[0]", "tags", "“smoke”: "],
      ["steps", "steps"],
      ["steps.steps", "steps"],
      ["steps[0]", `${login}:name`],
      ["steps[1].name", `${upload}:name`],
      ["steps.steps[1].name", `${upload}:name`],
      ["steps[0].http.request.method", `${login}:request.method`],
      ["steps[1].http.request.path", `${upload}:request.path`],
      ["steps.steps[1].http.request.path", `${upload}:request.path`],
      ["steps[0].http.request.headers", `${login}:request.headers`],
      ['steps[0].http.request.headers["Accept"]', `${login}:request.headers#1`],
      ["steps[0].http.request.query", `${login}:request.query`],
      ['steps[0].http.request.query["lang"]', `${login}:request.query#0`],
      ["steps[0].http.request.json", `${login}:request.json`],
      ["steps[1].http.request.raw", `${upload}:request.raw`],
      ["steps[0].http.request.timeout_ms", `${login}:request.timeoutMs`],
      ["steps[0].http.expect.status", `${login}:expect.status`],
      ["steps[0].http.expect.status[2]", `${login}:expect.status`, "“700”: "],
      ['steps[0].http.expect.headers["content-type"]', `${login}:expect.headers#0`],
      ["steps[0].http.expect.body_contains", `${login}:expect.bodyContains`],
      ["steps[0].http.expect.body_not_contains", `${login}:expect.bodyNotContains`],
      ["steps[0].http.expect.json", `${login}:expect.json`],
      [`steps[0].http.expect.json[${JSON.stringify("$.user['name']")}]`, `${login}:expect.json#1`],
      ["steps[0].http.expect.max_duration_ms", `${login}:expect.maxDurationMs`],
      ["steps[0].http.save", `${login}:save`],
      ['steps[0].http.save["token"]', `${login}:save#0`],
      ["steps[0].http", `${login}:request.method`],
      ["steps[0].http.request", `${login}:request.method`],
    ];
    for (const [path, field, prefix] of cases)
      expect(fieldOfPath(path, d), path).to.deep.equal({ field, ...(prefix && { prefix }) });
  });

  it("words each as a sentence at its field, several at one field together, and keeps what names no field", () => {
    const d = sent();
    const login = d.steps[0]?.key;
    const { fields, unplaced } = violationMessages(
      [
        violation("steps[0].http.request.path", 'must start with "/"'),
        violation("steps[0].http.expect.status[2]", "must be 100 to 599"),
        violation("steps[0].http.expect.status[1]", "must be 100 to 599"),
        violation("name", "is required"),
        violation("owner", "is not a field of a test case"),
      ],
      d,
    );
    expect(Object.fromEntries(fields)).to.deep.equal({
      [`${login}:request.path`]: 'Must start with "/".',
      [`${login}:expect.status`]: "“700”: Must be 100 to 599. “201”: Must be 100 to 599.",
      name: "Is required.",
    });
    expect(unplaced).to.deep.equal(["owner: is not a field of a test case"]);
  });

  it("keeps an error with its step when the steps were reordered after sending", () => {
    const d = sent();
    const upload = d.steps[1];
    const { fields } = violationMessages([violation("steps[1].http.request.path", "x")], d);
    // The draft on screen now has the steps the other way round; the error is keyed by the step.
    expect([...fields.keys()]).to.deep.equal([`${upload?.key}:request.path`]);
  });

  it("keeps an error only while its field holds what was sent, wherever its step moved", () => {
    const d = sent();
    const [login, upload] = d.steps;
    if (!login || !upload) throw new Error("no steps");
    const { fields } = violationMessages(
      [
        violation("name", "is required"),
        violation("steps[0].http.expect.status[2]", "must be 100 to 599"),
        violation('steps[0].http.save["token"]', "is not a JSON path"),
        violation("steps[1].http.request.path", 'must start with "/"'),
      ],
      d,
    );
    const current = structuredClone(d);
    current.steps.reverse();
    expect([...stillAtSentValues(fields, d, current).keys()], "only moved").to.have.length(4);
    const movedLogin = current.steps.find((step) => step.key === login.key);
    if (!movedLogin) throw new Error("no step");
    movedLogin.draft.expect.status = "200";
    const savedRow = movedLogin.draft.save[0];
    if (savedRow) savedRow.value = "$.access_token";
    current.name = "Renamed";
    expect([...stillAtSentValues(fields, d, current).keys()]).to.deep.equal([`${upload.key}:request.path`]);
    // Back to the refused value: the error is back.
    movedLogin.draft.expect.status = login.draft.expect.status;
    expect([...stillAtSentValues(fields, d, current).keys()]).to.include(`${login.key}:expect.status`);
  });
});

describe("console editor: a duplicate's name", () => {
  it("is the name with (copy), cut so that the whole fits 200 characters", () => {
    expect(copyName("Login")).to.equal("Login (copy)");
    const long = "é".repeat(200);
    const copy = copyName(long);
    expect([...copy]).to.have.length(200);
    expect(copy).to.match(/^é+… \(copy\)$/);
    expect([...copyName("x".repeat(193))]).to.have.length(200);
    expect(copyName("x".repeat(193))).to.equal(`${"x".repeat(193)} (copy)`);
  });
});

describe("console editor: a save's size", () => {
  const uploads = (bodies: string[]) =>
    bodies.map((raw, i) =>
      create(StepSchema, {
        name: `upload ${i}`,
        kind: {
          case: "http",
          value: { request: { method: "PUT", path: `/f/${i}`, body: { case: "raw", value: raw } } },
        },
      }),
    );
  const createOf = (bodies: string[]) =>
    create(CreateTestCaseRequestSchema, { projectId: "p", name: "uploads", steps: uploads(bodies) });

  it("fits up to the catalog's 8 MiB: two 1 MiB bodies are saved from the editor", () => {
    const request = createOf(["a".repeat(1024 * 1024), "b".repeat(1024 * 1024)]);
    expect(saveSizeProblem(CreateTestCaseRequestSchema, request)).to.equal(undefined);
    const update = create(UpdateTestCaseRequestSchema, {
      projectId: "p",
      testCaseId: "t",
      steps: { steps: request.steps },
      expectedVersion: 3,
    });
    expect(saveSizeProblem(UpdateTestCaseRequestSchema, update)).to.equal(undefined);
  });

  it("is measured as sent, in binary: a body JSON would double still fits", () => {
    // Quotes are escaped in JSON (two bytes each) but one byte in binary, the catalog's encoding.
    const request = createOf(Array.from({ length: 7 }, () => '"'.repeat(1024 * 1024)));
    expect(toJsonString(CreateTestCaseRequestSchema, request).length).to.be.above(14 * 1024 * 1024);
    expect(saveSizeProblem(CreateTestCaseRequestSchema, request)).to.equal(undefined);
  });

  it("past 8 MiB is refused before sending, pointing to smaller bodies", () => {
    const request = createOf(Array.from({ length: 9 }, () => "x".repeat(1_000_000)));
    expect(toBinary(CreateTestCaseRequestSchema, request).length).to.be.above(8 * 1024 * 1024);
    expect(saveSizeProblem(CreateTestCaseRequestSchema, request)).to.equal(
      "This test case is 8.58 MiB as sent; a test case is saved in one message of at most 8 MiB. Make its bodies smaller, or split its steps into several test cases.",
    );
    const update = create(UpdateTestCaseRequestSchema, {
      projectId: "p",
      testCaseId: "t",
      steps: { steps: request.steps },
    });
    expect(saveSizeProblem(UpdateTestCaseRequestSchema, update)).to.match(
      /^This test case is 8\.58 MiB as sent;/,
    );
  });
});
