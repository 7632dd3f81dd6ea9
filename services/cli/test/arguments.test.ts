import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { fileFieldPath } from "@testrun/content-file";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  AmbiguousNameSchema,
  FieldViolationsSchema,
  InsufficientCreditsSchema,
} from "@testrun/gen/testrun/common/v1/errors_pb";
import { KeyExpiry } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { findFreePort } from "@testrun/testing";
import { expect } from "chai";
import { parseExpiry, parseId, parseRole, parseWholeNumber, variableValue } from "../src/arguments.js";
import { describeServiceError, ServiceCallError } from "../src/errors.js";
import { runCli } from "../src/program.js";

/** Runs the CLI in this process with captured output; `stdin` is what standard input holds. */
async function cli(argv: string[], options: { env?: NodeJS.ProcessEnv; stdin?: string } = {}) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    readSecret: async () => options.stdin ?? "",
    readStdin: async () => options.stdin ?? "",
    env: options.env ?? env,
  });
  return { code, stdout, stderr };
}

// Services at a port nobody listens on: a command that got as far as calling one exits 1
// ("cannot reach"), so exit code 2 proves the usage error was caught before any call.
let env: NodeJS.ProcessEnv = {};

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

describe("cli: argument values", () => {
  it("parses roles and expiries in any letter case, and lists the choices otherwise", () => {
    expect(parseRole("Editor")).to.equal(Role.EDITOR);
    expect(parseRole("owner")).to.equal(Role.OWNER);
    expect(errorOf(() => parseRole("superuser"))).to.equal(
      "role must be one of owner, admin, editor, viewer",
    );
    expect(parseExpiry("30D")).to.equal(KeyExpiry.DAYS_30);
    expect(parseExpiry("never")).to.equal(KeyExpiry.NEVER);
    expect(errorOf(() => parseExpiry("2y"))).to.equal("expiry must be one of 30d, 90d, 1y, never");
  });

  it("takes whole numbers in plain digits only, within bounds", () => {
    expect(parseWholeNumber("250", "the amount", 1, 1000)).to.equal(250);
    for (const bad of ["0", "1001", "-5", "1e3", "0x10", "12abc", "2.5", ""]) {
      expect(
        errorOf(() => parseWholeNumber(bad, "the amount", 1, 1000)),
        bad,
      ).to.equal("the amount must be a whole number from 1 to 1000");
    }
  });

  it("checks an id's prefix, so a name or another kind of id is caught before any call", () => {
    expect(parseId(" prj_01abc ", "prj", "project")).to.equal("prj_01abc");
    expect(errorOf(() => parseId("my project", "prj", "project"))).to.equal(
      "project must be an id starting with prj_",
    );
    expect(errorOf(() => parseId("org_01abc", "prj", "project"))).to.equal(
      "project must be an id starting with prj_",
    );
    expect(errorOf(() => parseId("prj_", "prj", "project"))).to.equal(
      "project must be an id starting with prj_",
    );
  });

  it("drops exactly one trailing line break from a variable value and never quotes it in an error", () => {
    expect(variableValue("s3cret\n")).to.equal("s3cret");
    expect(variableValue("s3cret\r\n")).to.equal("s3cret");
    expect(variableValue("two\nlines\n\n")).to.equal("two\nlines\n");
    expect(variableValue("  spaced  ")).to.equal("  spaced  ");
    expect(errorOf(() => variableValue("\n"))).to.equal("the variable's value is empty");
  });
});

describe("cli: usage errors exit 2 before any service is called", () => {
  before(async () => {
    const nowhere = `http://127.0.0.1:${await findFreePort()}`;
    env = { SERVICE_TOKEN: "t".repeat(40), CATALOG_URL: nowhere, KEYS_URL: nowhere, BILLING_URL: nowhere };
  });

  const usage: [string, string[], RegExp][] = [
    ["no command", [], /Usage: testrunctl/],
    ["an unknown command", ["projects", "list"], /unknown command 'projects'/],
    ["a missing required option", ["env", "list"], /required option '-p, --project <id>' not specified/],
    [
      "a name where an id goes",
      ["env", "list", "--project", "shop"],
      /project must be an id starting with prj_/,
    ],
    [
      "an unknown role",
      ["member", "set-role", "mem_1", "boss"],
      /role must be one of owner, admin, editor, viewer/,
    ],
    [
      "an unknown role option",
      ["member", "add", "--org", "org_1", "--email", "a@b.c", "--name", "A", "--role", "root"],
      /role must be one of/,
    ],
    [
      "an unknown expiry",
      ["key", "create", "ci", "-p", "prj_1", "--creator", "mem_1", "--expiry", "2y"],
      /Allowed choices are 30d, 90d, 1y, never/,
    ],
    [
      "a key without creator",
      ["key", "create", "ci", "-p", "prj_1"],
      /required option '--creator <member-id>'/,
    ],
    [
      "a bad amount",
      ["credits", "grant", "1e3", "-p", "prj_1", "--reason", "x"],
      /the amount must be a whole number from 1 to 1000000000/,
    ],
    ["an excess argument", ["org", "list", "extra"], /too many arguments/],
    ["an unknown option", ["org", "list", "--jsn"], /unknown option '--jsn'/],
    [
      "an owner email without a name",
      ["org", "create", "Acme", "--owner-email", "a@b.c"],
      /--owner-email and --owner-name go together/,
    ],
    ["an empty name", ["project", "create", " ", "--org", "org_1"], /the name must not be empty/],
    [
      "a missing file",
      ["case", "create", "-p", "prj_1", "-f", "/nonexistent/cases.yaml"],
      /cannot read \/nonexistent\/cases\.yaml: no such file/,
    ],
    [
      "a bad ledger limit",
      ["credits", "ledger", "-p", "prj_1", "--limit", "0"],
      /--limit must be a whole number from 1 to 100000/,
    ],
  ];
  for (const [what, argv, message] of usage) {
    it(`${what}: ${argv.join(" ") || "(nothing)"}`, async () => {
      const { code, stdout, stderr } = await cli(argv);
      expect(code, stderr).to.equal(2);
      expect(stderr).to.match(message);
      expect(stdout).to.equal("");
    });
  }

  it("--help exits 0 and documents that a --value can land in shell history", async () => {
    const { code, stdout } = await cli(["var", "set", "--help"]);
    expect(code).to.equal(0);
    expect(stdout).to.match(/shell history/);
    expect(stdout).to.match(/--json/);
  });

  it("names a missing SERVICE_TOKEN, and a malformed URL variable without echoing it", async () => {
    const noToken = await cli(["org", "list"], { env: {} });
    expect(noToken.code).to.equal(2);
    expect(noToken.stderr).to.equal(
      "error: SERVICE_TOKEN is not set: testrunctl authenticates to the services with the service token\n",
    );
    const badUrl = await cli(["org", "list"], {
      env: { SERVICE_TOKEN: "t".repeat(40), CATALOG_URL: "postgres://user:hunter2@db/x" },
    });
    expect(badUrl.code).to.equal(2);
    expect(badUrl.stderr).to.equal("error: CATALOG_URL must be like http://host:port\n");
  });

  it("refuses a bad test case file naming the file and field, before calling the catalog", async () => {
    const file = join(tmpdir(), `testrunctl-${process.pid}-bad.yaml`);
    await writeFile(file, "- name: ok\n  steps:\n    - name: s\n      http: { method: GET }\n");
    const { code, stderr } = await cli(["case", "create", "-p", "prj_1", "-f", file]);
    expect(code).to.equal(2);
    expect(stderr).to.equal(`error: ${file}: [0].steps[0].http.path: is required\n`);
  });

  it("refuses an empty variable value without calling the catalog", async () => {
    const { code, stderr } = await cli(["var", "set", "TOKEN", "-p", "prj_1"], { stdin: "\n" });
    expect(code).to.equal(2);
    expect(stderr).to.equal("error: the variable's value is empty\n");
  });

  it("exits 1 with a one-line message naming the service when it cannot be reached", async () => {
    const { code, stdout, stderr } = await cli(["var", "set", "TOKEN", "-p", "prj_1"], {
      stdin: "hunter2-value\n",
    });
    expect(code).to.equal(1);
    expect(stdout).to.equal("");
    expect(stderr).to.match(
      /^error: cannot reach the catalog service at http:\/\/127\.0\.0\.1:\d+ \(is it running\? set CATALOG_URL\)/,
    );
    expect(stderr.trimEnd().split("\n")).to.have.length(1);
    expect(stderr).not.to.include("hunter2");
  });
});

describe("cli: service errors as one line", () => {
  const failure = (error: ConnectError, fieldPath?: (field: string) => string, note?: string) =>
    describeServiceError(
      new ServiceCallError("catalog", "http://127.0.0.1:7102", "CreateTestCase", error, fieldPath, note),
    );

  it("lists every field violation, in the file's terms when the command knows them", () => {
    const error = new ConnectError(
      "steps[0].http.request.method: must be one of GET, …",
      Code.InvalidArgument,
      undefined,
      [
        {
          desc: FieldViolationsSchema,
          value: {
            violations: [
              { field: "steps[0].http.request.method", description: "must be one of GET, HEAD, POST" },
              { field: "steps[1].http.expect.max_duration_ms", description: "must be 0 to 120000" },
            ],
          },
        },
      ],
    );
    expect(
      failure(
        error,
        (field) => `[2].${fileFieldPath(field)}`,
        'test case [2] ("x"); created before it: tc_1, tc_2',
      ),
    ).to.equal(
      "invalid argument: [2].steps[0].http.method: must be one of GET, HEAD, POST; " +
        "[2].steps[1].expect.maxDurationMs: must be 0 to 120000 (catalog CreateTestCase); " +
        'test case [2] ("x"); created before it: tc_1, tc_2',
    );
  });

  it("adds the candidates of an ambiguous name and the numbers of missing credits", () => {
    const ambiguous = new ConnectError("test plan name matches 2 plans", Code.Aborted, undefined, [
      {
        desc: AmbiguousNameSchema,
        value: create(AmbiguousNameSchema, {
          field: "test_plan",
          name: "x",
          candidateIds: ["pln_1", "pln_2"],
        }),
      },
    ]);
    expect(failure(ambiguous)).to.equal(
      "aborted: test plan name matches 2 plans (use one of these ids: pln_1, pln_2) (catalog CreateTestCase)",
    );
    const credits = new ConnectError("not enough credits", Code.FailedPrecondition, undefined, [
      { desc: InsufficientCreditsSchema, value: { required: 5n, available: 2n } },
    ]);
    expect(failure(credits)).to.match(/^failed precondition: not enough credits \(required 5, available 2\)/);
  });

  it("says what to check for transport and token failures", () => {
    expect(failure(new ConnectError("bad token", Code.Unauthenticated))).to.equal(
      "the catalog service refused the service token: check SERVICE_TOKEN (CreateTestCase)",
    );
    expect(failure(new ConnectError("", Code.Unimplemented))).to.equal(
      "the catalog service at http://127.0.0.1:7102 does not implement CreateTestCase (is it up to date?)",
    );
    expect(failure(new ConnectError("no such project", Code.NotFound))).to.equal(
      "not found: no such project (catalog CreateTestCase)",
    );
  });
});
