import { randomBytes } from "node:crypto";
import { type DescMessage, type MessageShape, toBinary, toJsonString } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  CreateVariableResponseSchema,
  GetProjectResponseSchema,
  GetVariableResponseSchema,
  ListVariablesResponseSchema,
  UpdateVariableResponseSchema,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { VariablesGrants } from "@testrun/kit";
import {
  apiKey,
  type Catalog,
  type InProcessCatalog,
  member,
  operator,
  rejects,
  runServiceCommand,
  seedOrganization,
  startInProcessCatalog,
} from "@testrun/testing";
import { expect } from "chai";

/** Values unlike anything else in the suite, so finding one anywhere is a leak. */
const secret = (label: string) => `${label}-${randomBytes(12).toString("hex")}`;

describe("catalog: variables", () => {
  let h: InProcessCatalog;
  /** What an executor does with the grant the runs service issued with its claim of the test. */
  const readValues = (executor: Catalog, projectId: string, testResultId: string) =>
    executor.getVariableValues({
      projectId,
      testResultId,
      grant: new VariablesGrants(h.env.SERVICE_TOKEN ?? "").issue({ projectId, testResultId }, 60_000),
    });
  let catalog: Catalog;
  let seed: Awaited<ReturnType<typeof seedOrganization>>;
  let editor: Actor;
  /** Every value this suite ever sent; none may appear outside GetVariableValues. */
  const used: string[] = [];
  const value = (label: string) => {
    const v = secret(label);
    used.push(v);
    return v;
  };

  before(async () => {
    // At debug: every line the catalog can write, each call's "rpc ok" included, is checked below.
    h = await startInProcessCatalog({ LOG_LEVEL: "debug" });
    catalog = h.catalog;
    seed = await seedOrganization(catalog);
    editor = member(seed.members.editor);
  });
  after(async () => {
    await h.stop();
  });

  /** Fails when any value sent so far appears in a response, in binary or in JSON form. */
  function expectNoValue<D extends DescMessage>(schema: D, response: MessageShape<D>): void {
    const binary = Buffer.from(toBinary(schema, response)).toString("latin1");
    const json = toJsonString(schema, response);
    for (const v of used) {
      expect(binary, "binary response").to.not.contain(v);
      expect(json, "JSON response").to.not.contain(v);
    }
  }

  it("never returns a value from any RPC but GetVariableValues, and only to the executor", async () => {
    const projectId = seed.projectId;
    const created = await catalog.createVariable({
      actor: editor,
      projectId,
      name: "PASSWORD",
      value: value("pw"),
    });
    expectNoValue(CreateVariableResponseSchema, created);
    expect(created.variable).to.include({ name: "PASSWORD", projectId });
    const token = await catalog.createVariable({
      actor: editor,
      projectId,
      name: "api_token",
      value: value("tok"),
    });
    expectNoValue(
      GetVariableResponseSchema,
      await catalog.getVariable({ actor: editor, projectId, variableId: token.variable?.id }),
    );
    const listed = await catalog.listVariables({ actor: member(seed.members.viewer), projectId });
    expectNoValue(ListVariablesResponseSchema, listed);
    expect(listed.variables.map((v) => v.name)).to.deep.equal(["PASSWORD", "api_token"]);
    const newValue = value("pw2");
    const updated = await catalog.updateVariable({
      actor: editor,
      projectId,
      variableId: created.variable?.id,
      value: newValue,
    });
    expectNoValue(UpdateVariableResponseSchema, updated);
    expectNoValue(
      GetProjectResponseSchema,
      await catalog.getProject({ actor: editor, projectId, includeContents: true }),
    );

    // The executor's token reads them.
    const { values } = await readValues(h.executor, projectId, "tr_01jd3k00000000000000000000");
    expect(values).to.deep.equal({ PASSWORD: newValue, api_token: used[1] });

    // The service token does not, whoever the caller claims to be; the executor reads nothing else.
    const denied = await rejects(
      catalog.getVariableValues({ projectId, testResultId: "tr_01jd3k00000000000000000000" }),
      Code.PermissionDenied,
    );
    expect(denied.rawMessage).to.equal("only executors may read variable values");
    await rejects(h.executor.listVariables({ actor: operator(), projectId }), Code.PermissionDenied);
    await rejects(h.executor.getProject({ actor: operator(), projectId }), Code.PermissionDenied);
    await rejects(readValues(h.executor, "prj_nope", "tr_x"), Code.NotFound);
    await rejects(readValues(h.executor, projectId, ""), Code.InvalidArgument);
  });

  it("hands values to an executor only with the grant of its claim of that very test", async () => {
    const projectId = seed.projectId;
    const testResultId = "tr_01jd3k00000000000000000001";
    const grants = new VariablesGrants(h.env.SERVICE_TOKEN ?? "");
    const read = (grant: string) => h.executor.getVariableValues({ projectId, testResultId, grant });
    const refusal = async (grant: string) => (await rejects(read(grant), Code.PermissionDenied)).rawMessage;

    expect((await read(grants.issue({ projectId, testResultId }, 60_000))).values).to.have.property(
      "PASSWORD",
    );
    expect(await refusal("")).to.contain("missing or not for this project and test");
    expect(
      await refusal(grants.issue({ projectId, testResultId: "tr_01jd3k00000000000000000002" }, 60_000)),
    ).to.contain("not for this project and test");
    const other = await seedOrganization(catalog);
    expect(await refusal(grants.issue({ projectId: other.projectId, testResultId }, 60_000))).to.contain(
      "not for this project and test",
    );
    expect(await refusal(grants.issue({ projectId, testResultId }, -1))).to.contain("expired");
    // Made with another SERVICE_TOKEN (what an executor could try to forge): worthless.
    const forged = new VariablesGrants(randomBytes(32).toString("base64url")).issue(
      { projectId, testResultId },
      60_000,
    );
    expect(await refusal(forged)).to.contain("not for this project and test");
    // A grant with its expiry moved on does not match its signature.
    const [expiry, mac] = grants.issue({ projectId, testResultId }, -1).split(".");
    expect(await refusal(`${Number(expiry) + 3_600_000}.${mac}`)).to.contain("not for this project and test");
  });

  it("API keys neither see nor change variables", async () => {
    const actor = apiKey(seed.members.editor, seed.projectId, new Date(Date.now() - 1000));
    const projectId = seed.projectId;
    await rejects(catalog.listVariables({ actor, projectId }), Code.PermissionDenied);
    await rejects(
      catalog.createVariable({ actor, projectId, name: "K", value: value("k") }),
      Code.PermissionDenied,
    );
    // Viewers read names but change nothing.
    const viewer = member(seed.members.viewer);
    await rejects(
      catalog.createVariable({ actor: viewer, projectId, name: "K", value: value("k") }),
      Code.PermissionDenied,
    );
  });

  it("stores values encrypted: the ciphertext is not the value, and the same value encrypts differently", async () => {
    const projectId = seed.projectId;
    const same = value("same");
    const a = await catalog.createVariable({ actor: editor, projectId, name: "SAME_A", value: same });
    const b = await catalog.createVariable({ actor: editor, projectId, name: "SAME_B", value: same });
    const rows = await h.db.query<{
      id: string;
      value_ciphertext: Buffer;
      value_iv: Buffer;
      value_tag: Buffer;
    }>(
      "select id, value_ciphertext, value_iv, value_tag from catalog.variables where id = any($1) order by id",
      [[a.variable?.id, b.variable?.id]],
    );
    expect(rows.rows).to.have.length(2);
    const plain = Buffer.from(same, "utf8");
    for (const row of rows.rows) {
      expect(row.value_ciphertext.includes(plain)).to.equal(false);
      expect(row.value_ciphertext.toString("latin1")).to.not.contain(same);
      expect(row.value_iv).to.have.length(12);
      expect(row.value_tag).to.have.length(16);
    }
    const [first, second] = rows.rows;
    expect(first?.value_ciphertext.equals(second?.value_ciphertext as Buffer)).to.equal(false);
    const whole = await h.db.query("select row_to_json(v)::text as text from catalog.variables v");
    for (const row of whole.rows) for (const v of used) expect(row.text).to.not.contain(v);
  });

  it("a ciphertext moved onto another variable does not decrypt there", async () => {
    const other = await seedOrganization(catalog);
    const projectId = other.projectId;
    const a = await catalog.createVariable({ actor: operator(), projectId, name: "A", value: value("a") });
    const b = await catalog.createVariable({ actor: operator(), projectId, name: "B", value: value("b") });
    await h.db.query(
      `update catalog.variables b set value_ciphertext = a.value_ciphertext, value_iv = a.value_iv, value_tag = a.value_tag
       from catalog.variables a where a.id = $1 and b.id = $2`,
      [a.variable?.id, b.variable?.id],
    );
    const error = await rejects(
      readValues(h.executor, projectId, "tr_01jd3k00000000000000000000"),
      Code.Internal,
    );
    expect(error.rawMessage).to.equal("internal error");
  });

  it("validates names and values without quoting the value", async () => {
    const projectId = seed.projectId;
    const taken = await rejects(
      catalog.createVariable({ actor: editor, projectId, name: "password", value: value("dup") }),
      Code.AlreadyExists,
    );
    expect(taken.rawMessage).to.contain("password");
    for (const name of ["", "1ABC", "with-dash", "A".repeat(65), "{{X}}"]) {
      const error = await rejects(
        catalog.createVariable({ actor: editor, projectId, name, value: value("n") }),
        Code.InvalidArgument,
      );
      expect(error.rawMessage).to.match(/^name: /);
    }
    const long = value("long").padEnd(8193, "x");
    used.push(long);
    const tooLong = await rejects(
      catalog.createVariable({ actor: editor, projectId, name: "LONG", value: long }),
      Code.InvalidArgument,
    );
    expect(tooLong.rawMessage).to.equal("value: must be 1 to 8192 bytes of UTF-8 (got 8193 bytes)");
    await rejects(
      catalog.createVariable({ actor: editor, projectId, name: "EMPTY", value: "" }),
      Code.InvalidArgument,
    );
    // Any UTF-8 is a value, NUL included: it is stored encrypted, never as text.
    const binaryish = `${value("nul")}\u0000end`;
    await catalog.createVariable({ actor: editor, projectId, name: "WITH_NUL", value: binaryish });
    const read = await readValues(h.executor, projectId, "tr_01jd3k00000000000000000000");
    expect(read.values.WITH_NUL).to.equal(binaryish);
    // Renaming onto a taken name, ignoring case.
    const listed = await catalog.listVariables({ actor: editor, projectId });
    const token = listed.variables.find((v) => v.name === "api_token");
    await rejects(
      catalog.updateVariable({
        actor: editor,
        projectId,
        variableId: token?.id,
        name: "Password",
        value: value("u"),
      }),
      Code.AlreadyExists,
    );
    const { values } = await readValues(h.executor, projectId, "tr_01jd3k00000000000000000000");
    expect(values.api_token).to.equal(used[1]);
    // Deleted: gone for everyone.
    await catalog.deleteVariable({ actor: editor, projectId, variableId: token?.id });
    await rejects(catalog.getVariable({ actor: editor, projectId, variableId: token?.id }), Code.NotFound);
  });

  it("without VARIABLES_KEY, refuses to store or hand out values but serves the rest", async () => {
    // The same database and tokens, wired without the key.
    const keyless = await startInProcessCatalog({ ...h.env, VARIABLES_KEY: undefined });
    try {
      await keyless.logLine((line) => line.includes("VARIABLES_KEY is not set"));
      const client = keyless.catalog;
      const projectId = seed.projectId;
      const refused = await rejects(
        client.createVariable({ actor: editor, projectId, name: "NEW", value: value("keyless") }),
        Code.FailedPrecondition,
      );
      expect(refused.rawMessage).to.contain("VARIABLES_KEY");
      expect((await client.listVariables({ actor: editor, projectId })).variables.length).to.be.greaterThan(
        0,
      );
      await rejects(readValues(keyless.executor, projectId, "tr_x"), Code.FailedPrecondition);
    } finally {
      await keyless.stop();
    }
  });

  it("refuses to start with a VARIABLES_KEY that is not 32 bytes of base64, without echoing it", async () => {
    const bad = secret("not-a-key");
    const failure = await runServiceCommand("catalog", ["migrate"], { ...h.env, VARIABLES_KEY: bad }).then(
      () => "",
      (error: Error) => error.message,
    );
    expect(failure).to.contain("VARIABLES_KEY: must be 32 bytes, base64-encoded");
    expect(failure).to.not.contain(bad);
  });

  // Runs last: everything above sent values through the catalog.
  it("no value ever appears in the catalog's log output", async () => {
    // A last call whose audit line marks the end: the log is one ordered stream, so once that line
    // has arrived, so has every line written before it.
    const marker = "tr_01jd3kzzzzzzzzzzzzzzzzzzzz";
    await readValues(h.executor, seed.projectId, marker);
    await h.logLine((line) => line.includes(marker));
    const log = h.lines().join("\n");
    expect(log).to.contain("rpc ok");
    for (const v of used) expect(log).to.not.contain(v);
  });
});
