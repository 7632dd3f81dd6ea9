// No 5xx on odd input (docs/rest-api.md, "Errors"): property-based requests (fast-check) to every
// operation of the gateway's OpenAPI document, with fuzzed methods, path values, query values,
// headers, keys and body fields (NUL and other control characters, invalid UTF-8 and percent
// escapes, long and odd strings, every JSON type), sent as raw HTTP/1.1 bytes so that nothing a
// client library would refuse to send is left out. Every answer must be below 500 and carry JSON:
// the error body `{error, code}` unless the request happened to succeed.
//
// The seed is fixed so that `make test` runs the same requests every time, in well under a minute;
// FUZZ_SEED and FUZZ_RUNS explore further. A failure prints the smallest request found (shrunk).
import http2 from "node:http2";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { Code } from "@connectrpc/connect";
import { addMember, createCliContext, createTestPlan } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { gzipBomb } from "@testrun/testing";
import { expect } from "chai";
import fc from "fast-check";
import { rssMiB } from "../scripts/bench/measure.js";
import type { System } from "../scripts/system.js";
import { consoleClient, signIn } from "./console-client.js";
import { addCases, getCase, newProject, startTestSystem } from "./pipeline.js";

const seed = Number(process.env.FUZZ_SEED ?? 20_261_114);
const numRuns = Number(process.env.FUZZ_RUNS ?? 300);

interface Operation {
  method: string;
  path: string;
  query: string[];
  bodyFields: string[];
}

interface RawAnswer {
  status: number;
  /** The status line and headers, as sent. */
  head: string;
  body: Buffer;
}

/** The body of a chunked answer. */
function unchunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at);
    const size = Number.parseInt(data.subarray(at, lineEnd).toString("latin1"), 16);
    if (!size) return Buffer.concat(parts);
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** One request over a fresh connection, its bytes as given (no client-side checks), read until the server closes. */
function rawRequest(port: number, request: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error("no answer within 20 s")));
    socket.on("data", (chunk) => chunks.push(chunk));
    // A server that answered before reading the whole body may reset the connection while the
    // rest is still being sent: the answer received is the answer. The reset may even come before
    // the answer is read, which is then lost: status 0, for the caller to judge.
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (chunks.length === 0 && error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
    });
    socket.on("close", () => {
      const data = Buffer.concat(chunks);
      const split = data.indexOf("\r\n\r\n");
      const head = data.subarray(0, split < 0 ? data.length : split).toString("latin1");
      const rest = split < 0 ? Buffer.alloc(0) : data.subarray(split + 4);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        head,
        body: /^transfer-encoding:\s*chunked/im.test(head) ? unchunk(rest) : rest,
      });
    });
    // Not end(): a client that half-closes its side makes Node abort the request unanswered.
    socket.write(request);
  });
}

/** Node's own answer to a request its HTTP parser refuses (before the gateway sees it). */
const nodeParserRefusal = (answer: RawAnswer) =>
  answer.head === "HTTP/1.1 400 Bad Request\r\nConnection: close" && answer.body.length === 0;

const utf8 = (text: string) => Buffer.from(text, "utf8");

/** Text as a fuzzer would send it: control characters, NUL, lone surrogates, percent signs, long runs. */
const oddText = fc.oneof(
  fc.string({
    unit: fc.constantFrom("\u0000", "\u0001", "\u0007", "\t", "\n", "\r", "\u001b", "\u007f", "a"),
  }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom("%", "%zz", "%E0%A4%A", "..", "/", "\u0000", "a\u0000b", "\ud800", "0", "-1", "", " "),
  fc.string({ minLength: 300, maxLength: 3000 }),
);

/**
 * Bytes for the request line: text as UTF-8 percent-encoded (a correct client), the same bytes sent
 * raw but for what would end the path (a broken client), or arbitrary bytes percent-encoded
 * (invalid UTF-8).
 */
const urlBytes = fc.oneof(
  oddText.map((text) => ({ bytes: utf8(text), raw: false })),
  oddText.map((text) => ({ bytes: utf8(text), raw: true })),
  fc.uint8Array({ maxLength: 12 }).map((bytes) => ({ bytes: Buffer.from(bytes), raw: false })),
);
const unreserved = /[A-Za-z0-9\-._~]/;
function inUrl({ bytes, raw }: { bytes: Buffer; raw: boolean }): string {
  return [...bytes]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      const keep = raw ? !" ?#/&=\r\n".includes(char) : unreserved.test(char);
      return keep ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

/** A header value as bytes (UTF-8, latin1-mapped), without CR and LF, which would end the header. */
const headerValue = oddText.map((text) =>
  utf8(text)
    .toString("latin1")
    .replace(/[\r\n]/g, "")
    .slice(0, 400),
);

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** A secret of the key format that no key has: it goes to the keys service to be verified. */
const keyShaped = fc
  .string({ unit: fc.constantFrom(...base62), minLength: 46, maxLength: 46 })
  .map((rest) => `trk_${rest}`);

describe("no 5xx on odd input: property-based requests to every operation (fast-check)", function () {
  this.timeout(180_000);
  let system: System;
  let port: number;
  let secret: string;
  let operations: Operation[];
  /** Real ids and names of the project, so that values near them reach the services. */
  let known: string[];
  /** Valid bodies per operation ("POST /v1/runs"), which a request may start from and spoil a field of. */
  let validBodies: Record<string, Record<string, unknown>[]>;

  before(async () => {
    system = await startTestSystem({
      // Keyless and wrong-key requests must keep reaching the gateway's checks, not its 429.
      extraEnv: { AUTH_FAILURES_PER_MINUTE: "1000000", TRUST_PROXY_HOPS: "1" },
    });
    port = Number(new URL(system.gatewayUrl).port);
    const project = await newProject(system, "fuzz", { credits: 50 });
    secret = project.pipeline.key;
    const [testCase] = await addCases(system, project.projectId, getCase("home", "smoke", "/"));
    const testCaseId = testCase?.id ?? "";
    await createTestPlan(createCliContext(system.env), {
      projectId: project.projectId,
      name: "Plan",
      testCases: [testCaseId],
    });
    const run = await project.pipeline.start({ tags: ["smoke"] });
    known = ["demo", "smoke", "Plan", run.id, testCaseId, "run_", "tc_", "env_"];
    validBodies = {
      "POST /v1/runs": [
        { tags: ["smoke"] },
        { testPlan: "Plan", environment: "demo" },
        { testCaseIds: [testCaseId], name: "fuzz" },
      ],
      "POST /v1/runs/{id}/rerun": [{ failedOnly: true }],
      "POST /v1/runs/{id}/cancel": [{}],
    };
    const document = (await (await fetch(`${system.gatewayUrl}/v1/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { in: string; name: string }[];
            requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
          }
        >
      >;
    };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        query: (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        bodyFields: Object.keys(operation.requestBody?.content["application/json"]?.schema.properties ?? {}),
      })),
    );
    expect(operations.length).to.be.at.least(9);
  });
  after(() => system?.stop());

  /** A known id or name, alone or with odd text around it, or odd text alone. */
  const nearKnown = (text: fc.Arbitrary<string>) =>
    fc.oneof(
      text,
      fc.tuple(fc.nat(), text, fc.boolean()).map(([which, odd, before]) => {
        const value = known[which % known.length] as string;
        return before ? `${odd}${value}` : `${value}${odd}`;
      }),
    );
  const jsonValue = fc.oneof(
    nearKnown(oddText),
    fc.array(nearKnown(oddText), { maxLength: 5 }),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(null, true, 0, -1, 1e308, [], {}, [null], [[]]),
  );

  const requestArbitrary = fc.record({
    operation: fc.nat(),
    /** Another method than the operation's, now and then (405 or a HEAD). */
    method: fc.option(fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"), {
      freq: 5,
      nil: undefined,
    }),
    pathValue: fc.oneof(
      urlBytes,
      nearKnown(oddText).map((text) => ({ bytes: utf8(text), raw: false })),
    ),
    pathTail: fc.constantFrom("", "", "", "/", "/x", "//", "/%00", "/.."),
    query: fc.array(fc.tuple(fc.option(fc.nat(), { nil: undefined }), urlBytes), { maxLength: 3 }),
    auth: fc.oneof(
      { arbitrary: fc.constant({ kind: "valid" as const }), weight: 4 },
      fc.constant({ kind: "none" as const }),
      keyShaped.map((text) => ({ kind: "bearer" as const, text })),
      headerValue.map((text) => ({ kind: "bearer" as const, text })),
      headerValue.map((text) => ({ kind: "x-api-key" as const, text })),
    ),
    headers: fc.array(
      fc.tuple(
        fc.constantFrom(
          "Idempotency-Key",
          "X-Request-Id",
          "X-Forwarded-For",
          "Content-Type",
          "Accept",
          "Accept-Encoding",
          "X-Api-Key",
          "Authorization",
          "Origin",
          "traceparent",
        ),
        headerValue,
      ),
      { maxLength: 3 },
    ),
    body: fc.oneof(
      fc.constant(undefined),
      fc
        .record({ from: fc.nat(), fields: fc.array(fc.tuple(fc.nat(), jsonValue), { maxLength: 2 }) })
        .map(({ from, fields }) => ({ from, fields })),
      fc.array(fc.tuple(fc.nat(), jsonValue), { maxLength: 4 }).map((fields) => ({ fields })),
      jsonValue.map((value) => ({ json: value })),
      fc.string({ unit: "binary", maxLength: 200 }).map((text) => ({ bytes: utf8(text) })),
    ),
  });
  type FuzzRequest = typeof requestArbitrary extends fc.Arbitrary<infer T> ? T : never;

  /** The bytes of a request. */
  function build(input: FuzzRequest): { bytes: Buffer; method: string } {
    const operation = operations[input.operation % operations.length] as Operation;
    const method = input.method ?? operation.method;
    const path = `${operation.path.replace("{id}", () => inUrl(input.pathValue) || "x")}${input.pathTail}`;
    const query = input.query
      .map(([which, value]) => {
        const name =
          which === undefined || operation.query.length === 0
            ? "unknown"
            : (operation.query[which % operation.query.length] as string);
        // Never a real long-poll: wait only ever gets a value that is not 1 to 30.
        return `${name}=${name === "wait" ? "x" : ""}${inUrl(value)}`;
      })
      .join("&");
    let body: Buffer | undefined;
    if (input.body && "fields" in input.body) {
      const templates = validBodies[`${operation.method} ${operation.path}`] ?? [{}];
      const object: Record<string, unknown> =
        "from" in input.body ? { ...templates[input.body.from % templates.length] } : {};
      for (const [which, value] of input.body.fields) {
        const field = operation.bodyFields.length
          ? (operation.bodyFields[which % operation.bodyFields.length] as string)
          : "unknown";
        object[field] = value;
      }
      body = utf8(JSON.stringify(object));
    } else if (input.body && "json" in input.body) {
      body = utf8(JSON.stringify(input.body.json) ?? "");
    } else if (input.body) {
      body = input.body.bytes;
    }
    const lines = [`${method} ${path}${query ? `?${query}` : ""} HTTP/1.1`, `Host: 127.0.0.1:${port}`];
    if (input.auth.kind === "valid") lines.push(`Authorization: Bearer ${secret}`);
    else if (input.auth.kind === "bearer") lines.push(`Authorization: Bearer ${input.auth.text}`);
    else if (input.auth.kind === "x-api-key") lines.push(`X-Api-Key: ${input.auth.text}`);
    for (const [name, value] of input.headers) lines.push(`${name}: ${value}`);
    if (body) {
      if (!input.headers.some(([name]) => name === "Content-Type"))
        lines.push("Content-Type: application/json");
      lines.push(`Content-Length: ${body.length}`);
    }
    lines.push("Connection: close");
    const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
    return { bytes: Buffer.concat([head, body ?? Buffer.alloc(0)]), method };
  }

  /** Requests tried first on every run: NUL and other control characters where ids, names and tags go. */
  function knownCases(): FuzzRequest[] {
    const operation = (key: string) => operations.findIndex((o) => `${o.method} ${o.path}` === key);
    const queryName = (key: string, name: string) => operations[operation(key)]?.query.indexOf(name);
    const inPath = (text: string) => ({ bytes: utf8(text), raw: false });
    const base: FuzzRequest = {
      operation: operation("GET /v1/runs/{id}"),
      method: undefined,
      pathValue: inPath("\u0000"),
      pathTail: "",
      query: [],
      auth: { kind: "valid" },
      headers: [],
      body: undefined,
    };
    const startRun = (json: Record<string, unknown>): FuzzRequest => ({
      ...base,
      operation: operation("POST /v1/runs"),
      body: { json },
    });
    const controls = ["\u0000", "\u0001", "\u001f", "\u007f", "\n"];
    return [
      ...controls.flatMap((control) => [
        { ...base, pathValue: inPath(control) },
        { ...base, pathValue: inPath(`run_${control}`) },
        { ...base, operation: operation("POST /v1/runs/{id}/cancel"), pathValue: inPath(`run_${control}`) },
        { ...base, operation: operation("POST /v1/runs/{id}/rerun"), pathValue: inPath(control) },
        startRun({ tags: ["smoke"], environment: control }),
        startRun({ tags: ["smoke"], environment: `demo${control}` }),
        startRun({ testPlan: `Plan${control}` }),
        startRun({ testCaseIds: [control] }),
        startRun({ testCaseIds: [`tc_${control}`] }),
        startRun({ tags: [`smoke${control}`] }),
        startRun({ tags: ["smoke"], name: control }),
        ...["tag", "search"].map((name) => ({
          ...base,
          operation: operation("GET /v1/test-cases"),
          query: [
            [queryName("GET /v1/test-cases", name), inPath(control)] as [number, typeof base.pathValue],
          ],
        })),
      ]),
      { ...base, pathValue: { bytes: Buffer.from([0xff, 0xfe]), raw: false } },
      { ...base, pathValue: inPath("%"), pathTail: "" },
      startRun({ tags: ["smoke"], environment: "\ud800" }),
    ];
  }

  it("answers every request below 500 with JSON: an error body {error, code} unless it succeeded", async () => {
    const property = fc.asyncProperty(requestArbitrary, async (input) => {
      const { bytes, method } = build(input);
      const answer = await rawRequest(port, bytes);
      const sent = bytes.toString("latin1").replaceAll(secret, "<the project's key>");
      const what = `${JSON.stringify(sent)}\n -> ${answer.head}\n\n${answer.body.toString("utf8")}`;
      expect(answer.status, what).to.be.within(200, 499);
      if (nodeParserRefusal(answer)) return;
      expect(answer.head, what).to.match(/^content-type: application\/json/im);
      if (method === "HEAD") return;
      const parsed = JSON.parse(answer.body.toString("utf8")) as Record<string, unknown>;
      if (answer.status >= 400) {
        expect(parsed.error, what).to.be.a("string");
        expect(parsed.code, what).to.be.a("string");
      }
    });
    await fc.assert(property, { seed, numRuns, examples: knownCases().map((example) => [example]) });
  });
});

/** One request over h2c to a service's port, the body as given; resolves when the answer ends. */
function h2Request(url: string, path: string, headers: Record<string, string>, body: Buffer) {
  return new Promise<{ status: number; grpcStatus: string | undefined; body: string }>((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, ...headers });
    let status = 0;
    let grpcStatus: string | undefined;
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      grpcStatus = h["grpc-status"]?.toString() ?? grpcStatus;
    });
    stream.on("trailers", (h) => {
      grpcStatus = h["grpc-status"]?.toString() ?? grpcStatus;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    // A refused body's rest is never read: the answer is whole at its end.
    stream.on("end", () => {
      session.destroy();
      resolve({ status, grpcStatus, body: Buffer.concat(chunks).toString("utf8") });
    });
    stream.on("error", reject);
    stream.end(body);
  });
}

const bomb = gzipBomb;

describe("no 5xx and bounded memory on hostile bodies: the console's API and a service's port", function () {
  this.timeout(180_000);
  let system: System;
  let consolePort: number;
  let viewerCookie: string;
  let consolePid: number | undefined;
  let runsPid: number | undefined;
  const rssAtStart = new Map<string, number>();
  const api = "/api/testrun.console.v1.ConsoleService";
  const consoleMethods = ConsoleService.methods.map((m) => m.name);

  before(async () => {
    system = await startTestSystem();
    consolePort = Number(new URL(system.consoleUrl).port);
    const project = await newProject(system, "fuzz console", { credits: 0 });
    const owner = consoleClient(system, await signIn(system, project.ownerId));
    const { organization } = await owner.getProject({ projectId: project.projectId });
    const viewer = await addMember(createCliContext(system.env), {
      organizationId: organization?.id ?? "",
      email: "viewer@fuzz-console.example",
      displayName: "Viewer",
      role: Role.VIEWER,
    });
    viewerCookie = await signIn(system, viewer.id);
    consolePid = system.processes.get("console")?.process.pid;
    runsPid = system.processes.get("runs")?.process.pid;
    rssAtStart.set("console", rssMiB(consolePid)).set("runs", rssMiB(runsPid));
  });
  after(() => system?.stop());

  /** A request to the console's HTTP port, as raw bytes. */
  function consoleRequest(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer = Buffer.alloc(0),
  ): Promise<RawAnswer> {
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${consolePort}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (method !== "GET") lines.push(`Content-Length: ${body.length}`);
    lines.push("Connection: close");
    return rawRequest(
      consolePort,
      Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body]),
    );
  }
  const json = { "Content-Type": "application/json", "Connect-Protocol-Version": "1" };
  const codeOf = (answer: RawAnswer) => (JSON.parse(answer.body.toString("utf8")) as { code?: string }).code;

  it("answers a gzip bomb UNAUTHENTICATED without a session, INVALID_ARGUMENT with one, and inflates neither", async () => {
    const gzip = { ...json, "Content-Encoding": "gzip" };
    const anonymous = await consoleRequest("POST", `${api}/ListProjects`, gzip, bomb(300));
    expect(anonymous.status).to.equal(401);
    expect(codeOf(anonymous)).to.equal("unauthenticated");
    const signedIn = await consoleRequest(
      "POST",
      `${api}/GetSession`,
      { ...gzip, Cookie: viewerCookie },
      bomb(300),
    );
    expect(signedIn.status).to.equal(400);
    expect(codeOf(signedIn)).to.equal("invalid_argument");
    // The methods that need no session read no compressed body either.
    for (const method of ["GetSignInOptions", "GetSession"])
      expect((await consoleRequest("POST", `${api}/${method}`, gzip, bomb(300))).status, method).to.equal(
        400,
      );
    // The sign-in routes are plain HTTP: a body past their bound is 413, inflated or not.
    const link = await consoleRequest("POST", "/auth/link", { ...gzip }, bomb(300));
    expect(link.status).to.equal(413);
    expect(rssMiB(consolePid) - (rssAtStart.get("console") ?? 0)).to.be.below(100);
  });

  it("refuses a body over 1 MiB RESOURCE_EXHAUSTED, and one that does not parse INVALID_ARGUMENT", async () => {
    const viewer = { ...json, Cookie: viewerCookie };
    const large = Buffer.from(JSON.stringify({ organizationId: "x".repeat(1024 * 1024) }));
    const oversized = await consoleRequest("POST", `${api}/ListProjects`, viewer, large);
    expect(codeOf(oversized)).to.equal("resource_exhausted");
    const badJson = await consoleRequest("POST", `${api}/ListProjects`, viewer, Buffer.from("{"));
    expect(codeOf(badJson)).to.equal("invalid_argument");
    const proto = { ...viewer, "Content-Type": "application/proto" };
    const badProto = await consoleRequest("POST", `${api}/ListProjects`, proto, Buffer.from([0, 1, 2]));
    expect(badProto.status).to.equal(400);
    expect(codeOf(badProto)).to.equal("invalid_argument");
  });

  it("answers a service's port in its protocol: no body read without the token, bad protobuf INVALID_ARGUMENT", async () => {
    const runsUrl = system.env.RUNS_URL ?? "";
    const getRun = "/testrun.runs.v1.RunsService/GetRun";
    const connectProto = { "content-type": "application/proto", "connect-protocol-version": "1" };
    const anonymous = await h2Request(
      runsUrl,
      getRun,
      { ...connectProto, "content-encoding": "gzip" },
      bomb(300),
    );
    expect(anonymous.status).to.equal(401);
    const token = { authorization: `Bearer ${system.env.SERVICE_TOKEN}` };
    const badProto = await h2Request(runsUrl, getRun, { ...connectProto, ...token }, Buffer.from([0, 1, 2]));
    expect(badProto.status).to.equal(400);
    expect(JSON.parse(badProto.body).code).to.equal("invalid_argument");
    const overGrpc = await h2Request(
      runsUrl,
      getRun,
      { "content-type": "application/grpc", te: "trailers", ...token, "grpc-encoding": "gzip" },
      Buffer.concat([Buffer.from([1, 0, 0, 0x04, 0xb0]), bomb(300).subarray(0, 0x4b0)]),
    );
    expect(overGrpc.grpcStatus).to.be.oneOf([String(Code.InvalidArgument), String(Code.ResourceExhausted)]);
    expect(rssMiB(runsPid) - (rssAtStart.get("runs") ?? 0)).to.be.below(100);
  });

  /** Content types a client might send, right and wrong (a NUL one is HTTP/2's to refuse, not ours). */
  const contentTypes = [
    "application/json",
    "application/proto",
    "application/connect+json",
    "application/grpc",
    "application/json; charset=latin1",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "",
  ];
  const encoding = fc.constantFrom(undefined, undefined, "gzip", "br", "identity", "deflate", "x-unknown");
  /** Bodies by name, so that a counterexample prints short. */
  const namedBodies: Record<string, () => Buffer> = {
    "gzip bomb (2 MiB inflated)": () => bomb(2),
    "truncated gzip with NUL text": () => gzipSync(utf8('{"organizationId":"a\\u0000b"}')).subarray(0, 15),
    "1 MiB and 1 byte": () => Buffer.alloc(1024 * 1024 + 1, "a"),
  };
  const fuzzBody = fc.oneof(
    fc
      .record({ organizationId: oddText, projectId: oddText, runId: oddText })
      .map((o) => utf8(JSON.stringify(o))),
    oddText.map(utf8),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    fc.constantFrom(...Object.keys(namedBodies)),
  );
  const bytesOf = (body: Buffer | string) =>
    typeof body === "string" ? (namedBodies[body] as () => Buffer)() : body;

  it("answers fuzzed requests to every console method below 500, session-less, made-up and as a Viewer", async () => {
    const property = fc.asyncProperty(
      fc.record({
        method: fc.constantFrom(...consoleMethods),
        httpMethod: fc.constantFrom("POST", "POST", "POST", "GET", "PUT"),
        auth: fc.constantFrom("none", "viewer", "made-up"),
        contentType: fc.constantFrom(...contentTypes, "\u0000"),
        encoding,
        protocolHeader: fc.boolean(),
        body: fuzzBody,
      }),
      async (input) => {
        const headers: Record<string, string> = {};
        if (input.contentType) headers["Content-Type"] = input.contentType;
        if (input.encoding) headers["Content-Encoding"] = input.encoding;
        if (input.protocolHeader) headers["Connect-Protocol-Version"] = "1";
        if (input.auth === "viewer") headers.Cookie = viewerCookie;
        if (input.auth === "made-up") headers.Cookie = "testrun_session=made-up";
        const query =
          input.httpMethod === "GET"
            ? `?encoding=json&message=${encodeURIComponent(bytesOf(input.body).subarray(0, 200).toString("latin1"))}${input.encoding ? `&compression=${encodeURIComponent(input.encoding)}` : ""}`
            : "";
        const answer = await consoleRequest(
          input.httpMethod,
          `${api}/${input.method}${query}`,
          headers,
          input.httpMethod === "GET" ? undefined : bytesOf(input.body),
        );
        const what = `${input.httpMethod} ${input.method} ${JSON.stringify(headers).replace(viewerCookie, "<cookie>")} -> ${answer.head}\n${answer.body.toString("utf8").slice(0, 300)}`;
        // Node's HTTP parser refuses a NUL in a header (400) and closes the connection at once; while
        // a large body is still being sent, the reset can overtake that answer. Nothing else may cut one.
        if (answer.status === 0 && input.contentType === "\u0000") return;
        expect(answer.status, what).to.be.within(200, 499);
      },
    );
    await fc.assert(property, { seed, numRuns: Math.min(numRuns, 200) });
    expect(rssMiB(consolePid) - (rssAtStart.get("console") ?? 0)).to.be.below(100);
  });

  it("answers fuzzed requests to a service's port without INTERNAL, UNKNOWN or 5xx, with the token or without", async () => {
    const runsUrl = system.env.RUNS_URL ?? "";
    const property = fc.asyncProperty(
      fc.record({
        path: fc.constantFrom(
          "/testrun.runs.v1.RunsService/GetRun",
          "/testrun.runs.v1.RunsService/ListRuns",
          "/grpc.health.v1.Health/Check",
        ),
        token: fc.constantFrom("service", "none", "wrong"),
        contentType: fc.constantFrom(...contentTypes),
        encoding,
        body: fuzzBody,
      }),
      async (input) => {
        const grpc = input.contentType.startsWith("application/grpc");
        const headers: Record<string, string> = { "content-type": input.contentType };
        if (grpc) headers.te = "trailers";
        if (input.encoding) headers[grpc ? "grpc-encoding" : "content-encoding"] = input.encoding;
        if (input.token === "service") headers.authorization = `Bearer ${system.env.SERVICE_TOKEN}`;
        if (input.token === "wrong") headers.authorization = "Bearer wrong";
        const message = bytesOf(input.body);
        const body = grpc
          ? Buffer.concat([Buffer.from([input.encoding ? 1 : 0, 0, 0, 0, 0]), message])
          : message;
        if (grpc) body.writeUInt32BE(message.length, 1);
        const answer = await h2Request(runsUrl, input.path, headers, body);
        const what = `${input.path} ${JSON.stringify({ ...headers, authorization: input.token })} -> ${answer.status} ${answer.grpcStatus} ${answer.body.slice(0, 300)}`;
        expect(answer.status, what).to.be.within(200, 499);
        expect(answer.grpcStatus, what).not.to.be.oneOf([String(Code.Unknown), String(Code.Internal)]);
      },
    );
    await fc.assert(property, { seed, numRuns: Math.min(numRuns, 200) });
    expect(rssMiB(runsPid) - (rssAtStart.get("runs") ?? 0)).to.be.below(100);
  });
});
