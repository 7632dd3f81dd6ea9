// Request bodies on a service's port (docs/security.md, "Resource limits"), over a real server on a
// real socket: no body is read before the service token is checked, bodies are bounded after
// decompression, a body that does not parse is the caller's mistake, and the largest legitimate
// message (a test case at its bounds) still fits.
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  CatalogService,
  CreateTestCaseRequestSchema,
  CreateTestCaseResponseSchema,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { GetRunRequestSchema, GetRunResponseSchema, RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { gzipBomb, testTokens } from "@testrun/testing";
import { expect } from "chai";
import { pino } from "pino";
import { serviceReadMaxBytes } from "../src/rpc/bodies.js";
import { serviceClient } from "../src/rpc/client.js";
import { bind, defaultStreamsPerConnection, type RpcServer, startRpcServer } from "../src/rpc/server.js";

/** A gRPC length-prefixed message: flag (1 = compressed), length, bytes. */
function grpcFrame(message: Uint8Array, compressed = false): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt8(compressed ? 1 : 0, 0);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

interface H2Answer {
  status: number;
  /** Headers and trailers together (gRPC puts its status in either). */
  headers: Record<string, string>;
  body: string;
}

/** One POST over h2c, the body sent as given: what no client library would let a test send. */
function post(port: number, path: string, headers: Record<string, string>, body: Buffer): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, ...headers });
    const answer: H2Answer = { status: 0, headers: {}, body: "" };
    const keep = (h: http2.IncomingHttpHeaders) => {
      for (const [name, value] of Object.entries(h)) answer.headers[name] = String(value);
    };
    stream.on("response", (h) => {
      answer.status = Number(h[":status"]);
      keep(h);
    });
    stream.on("trailers", keep);
    stream.on("data", (chunk: Buffer) => {
      answer.body += chunk.toString("utf8");
    });
    // The answer is complete at its end: a refused body's rest is never read, so the stream
    // would stay open until this side gives up.
    stream.on("end", () => {
      session.destroy();
      resolve(answer);
    });
    stream.on("error", reject);
    stream.end(body);
  });
}

const rssMiB = () => process.memoryUsage().rss / 1024 / 1024;

describe("request bodies on a service's port", function () {
  this.timeout(30_000);
  const tokens = testTokens();
  let server: RpcServer;
  /** Calls for a run named held… wait for this. */
  let held = Promise.withResolvers<void>();
  let heldArrived = () => {};
  const reached: string[] = [];
  /** The server's log lines, parsed. */
  const logged: Record<string, unknown>[] = [];

  before(async () => {
    server = await startRpcServer({
      services: [
        bind(RunsService, {
          getRun: async (req) => {
            reached.push(req.runId);
            if (req.runId.startsWith("held")) {
              heldArrived();
              await held.promise;
            }
            return create(GetRunResponseSchema, {});
          },
        }),
        bind(CatalogService, {
          createTestCase: (req) => {
            reached.push(`${req.steps.length} steps`);
            return create(CreateTestCaseResponseSchema, {});
          },
        }),
      ],
      host: "127.0.0.1",
      port: 0,
      tokens: { service: tokens.SERVICE_TOKEN, executor: tokens.EXECUTOR_TOKEN },
      logger: pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line)) }),
    });
  });
  after(() => server?.shutdown(1_000));
  beforeEach(() => {
    reached.length = 0;
  });

  const getRun = "/testrun.runs.v1.RunsService/GetRun";
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const connectProto = { "content-type": "application/proto", "connect-protocol-version": "1" };
  const grpc = { "content-type": "application/grpc", te: "trailers" };

  it("answers a call without the token UNAUTHENTICATED from its headers: a gzip bomb is never inflated", async () => {
    const rssBefore = rssMiB();
    const bomb = gzipBomb(300);
    const connect = await post(server.port, getRun, { ...connectProto, "content-encoding": "gzip" }, bomb);
    expect(connect.status).to.equal(401);
    expect(JSON.parse(connect.body)).to.deep.equal({
      code: "unauthenticated",
      message: "missing or invalid service token",
    });
    const overGrpc = await post(
      server.port,
      getRun,
      { ...grpc, "grpc-encoding": "gzip" },
      grpcFrame(bomb, true),
    );
    expect(overGrpc.headers["grpc-status"]).to.equal(String(Code.Unauthenticated));
    // 300 MiB inflated (and parsed) would be plain here; the margin only keeps the test steady.
    expect(rssMiB() - rssBefore).to.be.below(100);
    expect(reached).to.deep.equal([]);
    // Refused before any interceptor runs, yet still in the log, as a failed call is.
    const refusals = logged
      .filter((line) => line.msg === "rpc refused")
      .map(({ rpc, code }) => ({ rpc, code }));
    expect(refusals).to.deep.include({ rpc: "testrun.runs.v1.RunsService/GetRun", code: "Unauthenticated" });
  });

  it("closes a stream refused after part of its body was read, whose client never ends it, after the status", async () => {
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    try {
      const headers = { ":method": "POST", ":path": getRun, ...grpc, ...bearer(tokens.SERVICE_TOKEN) };
      const stream = session.request(headers, { endStream: false });
      const seen: string[] = [];
      stream.on("response", (h) => seen.push(`response ${h[":status"]}`));
      stream.on("trailers", (h) => seen.push(`grpc-status ${h["grpc-status"]}`));
      stream.on("end", () => seen.push("end"));
      stream.resume();
      // A message announced past the bound, a few of its bytes, then nothing: the body is never
      // ended, as a client holding streams open would.
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(serviceReadMaxBytes + 1, 1);
      stream.write(Buffer.concat([prefix, Buffer.alloc(64)]));
      await new Promise((resolve) => stream.once("close", resolve));
      expect(seen).to.deep.equal(["response 200", `grpc-status ${Code.ResourceExhausted}`, "end"]);
      expect(stream.rstCode).to.equal(http2.constants.NGHTTP2_NO_ERROR);
    } finally {
      session.destroy();
    }
  });

  it("bounds a connection's open calls, and a client holding more calls than that waits its turn", async () => {
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    try {
      await new Promise((resolve) => session.once("remoteSettings", resolve));
      expect(session.remoteSettings.maxConcurrentStreams).to.equal(defaultStreamsPerConnection);
    } finally {
      session.destroy();
    }
    held = Promise.withResolvers<void>();
    // The server holds every call it got; once the connection's streams are all taken, let go.
    const allTaken = new Promise<void>((resolve) => {
      heldArrived = () => reached.length === defaultStreamsPerConnection && resolve();
    });
    const runs = serviceClient(RunsService, `http://127.0.0.1:${server.port}`, {
      token: tokens.SERVICE_TOKEN,
    });
    const count = defaultStreamsPerConnection + 5;
    const calls = Array.from({ length: count }, (_, i) => runs.getRun({ runId: `held_${i}` }));
    await allTaken;
    held.resolve();
    await Promise.all(calls);
    expect(reached).to.have.length(count);
  });

  it("keeps the executor to its methods, and the token's caller gets through", async () => {
    const message = toBinary(GetRunRequestSchema, create(GetRunRequestSchema, { runId: "run_1" }));
    const executor = await post(
      server.port,
      getRun,
      { ...grpc, ...bearer(tokens.EXECUTOR_TOKEN) },
      grpcFrame(message),
    );
    expect(executor.headers["grpc-status"]).to.equal(String(Code.PermissionDenied));
    const service = await post(
      server.port,
      getRun,
      { ...grpc, ...bearer(tokens.SERVICE_TOKEN) },
      grpcFrame(message),
    );
    expect(service.headers["grpc-status"]).to.equal("0");
    expect(reached).to.deep.equal(["run_1"]);
  });

  it("refuses a body larger than the bound RESOURCE_EXHAUSTED, inflated or not, with the token", async () => {
    const rssBefore = rssMiB();
    const token = bearer(tokens.SERVICE_TOKEN);
    const bomb = await post(
      server.port,
      getRun,
      { ...connectProto, ...token, "content-encoding": "gzip" },
      gzipBomb(300),
    );
    expect(bomb.status).to.equal(429);
    expect(JSON.parse(bomb.body).code).to.equal("resource_exhausted");
    const large = Buffer.alloc(serviceReadMaxBytes + 1);
    const plain = await post(server.port, getRun, { ...connectProto, ...token }, large);
    expect(JSON.parse(plain.body).code).to.equal("resource_exhausted");
    const overGrpc = await post(server.port, getRun, { ...grpc, ...token }, grpcFrame(large));
    expect(overGrpc.headers["grpc-status"]).to.equal(String(Code.ResourceExhausted));
    expect(rssMiB() - rssBefore).to.be.below(100);
    expect(reached).to.deep.equal([]);
  });

  it("takes no compressed request for health and reflection, which need no token", async () => {
    const answer = await post(
      server.port,
      "/grpc.health.v1.Health/Check",
      { ...connectProto, "content-encoding": "gzip" },
      gzipBomb(1),
    );
    expect(answer.status).to.equal(400);
    expect(JSON.parse(answer.body)).to.deep.equal({
      code: "invalid_argument",
      message: "compressed request bodies are not accepted here",
    });
    const plain = await post(server.port, "/grpc.health.v1.Health/Check", connectProto, Buffer.alloc(0));
    expect(plain.status).to.equal(200);
  });

  it("answers a body that does not parse INVALID_ARGUMENT, in every protocol, never INTERNAL", async () => {
    const token = bearer(tokens.SERVICE_TOKEN);
    // Field 0 does not exist: not protobuf.
    const garbage = Buffer.from([0x00, 0x01, 0x02]);
    const connect = await post(server.port, getRun, { ...connectProto, ...token }, garbage);
    expect(connect.status).to.equal(400);
    expect(JSON.parse(connect.body).code).to.equal("invalid_argument");
    expect(JSON.parse(connect.body).message).to.match(/^parse binary: /);
    const overGrpc = await post(server.port, getRun, { ...grpc, ...token }, grpcFrame(garbage));
    expect(overGrpc.headers["grpc-status"]).to.equal(String(Code.InvalidArgument));
    const truncatedGzip = gzipSync(Buffer.from("x".repeat(100))).subarray(0, 12);
    const gzip = await post(
      server.port,
      getRun,
      { ...connectProto, ...token, "content-encoding": "gzip" },
      truncatedGzip,
    );
    expect(JSON.parse(gzip.body).code).to.equal("invalid_argument");
    const json = await post(
      server.port,
      getRun,
      { "content-type": "application/json", ...token },
      Buffer.from("{"),
    );
    expect(JSON.parse(json.body).code).to.equal("invalid_argument");
    expect(reached).to.deep.equal([]);
  });

  it("reads the largest legitimate request: a test case at every count bound with two 1 MiB bodies", async () => {
    const text = (length: number) => "x".repeat(length);
    const entries = () =>
      Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`Name_${i}`.padEnd(64, "x"), text(100)]));
    // docs/security.md, "Resource limits": 100 steps, every map and list at its 50 entries with
    // 100-character values, names and paths at their longest, and two steps with a 1 MiB body.
    const request = create(CreateTestCaseRequestSchema, {
      projectId: "prj_1",
      name: text(200),
      tags: Array<string>(50).fill(text(64)),
      steps: Array.from({ length: 100 }, (_, i) => ({
        name: text(200),
        kind: {
          case: "http" as const,
          value: {
            request: {
              method: "POST",
              path: `/${text(2047)}`,
              headers: entries(),
              query: entries(),
              body: { case: "raw" as const, value: i < 2 ? text(1024 * 1024) : "" },
            },
            expect: {
              status: Array.from({ length: 20 }, (_, k) => 200 + k),
              headers: entries(),
              bodyContains: Array<string>(50).fill(text(100)),
              bodyNotContains: Array<string>(50).fill(text(100)),
              json: Object.fromEntries(
                Array.from({ length: 50 }, (_, k) => [
                  `$.field_${k}`,
                  { kind: { case: "stringValue" as const, value: text(100) } },
                ]),
              ),
            },
            save: entries(),
          },
        },
      })),
    });
    expect(toBinary(CreateTestCaseRequestSchema, request).length).to.be.within(
      serviceReadMaxBytes - 2 * 1024 * 1024,
      serviceReadMaxBytes,
    );
    const catalog = serviceClient(CatalogService, `http://127.0.0.1:${server.port}`, {
      token: tokens.SERVICE_TOKEN,
    });
    await catalog.createTestCase(request);
    expect(reached).to.deep.equal(["100 steps"]);
  });
});
