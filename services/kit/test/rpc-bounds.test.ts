// The bounds of a service's gRPC port (docs/security.md, "Resource limits"): connections past
// RPC_MAX_CONNECTIONS are closed as they open, streams past a connection's cap are refused, and a
// connection left without a stream is closed; a real HTTP/2 server on a real socket.
import http2 from "node:http2";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { testTokens } from "@testrun/testing";
import { expect } from "chai";
import { pino } from "pino";
import { bind, type RpcServer, startRpcServer } from "../src/rpc/server.js";

/** A connection's fate: whether the server's SETTINGS reached it, and when it closed. */
function connectTo(port: number): {
  session: http2.ClientHttp2Session;
  settled: Promise<"open" | "closed">;
  closed: Promise<number>;
} {
  // As an attacker would: no waiting for the server's SETTINGS before opening streams.
  const session = http2.connect(`http://127.0.0.1:${port}`, { peerMaxConcurrentStreams: 1_000 });
  session.on("error", () => {});
  const closed = new Promise<number>((resolve) => session.once("close", () => resolve(performance.now())));
  const settled = Promise.race([
    new Promise<"open">((resolve) => session.once("remoteSettings", () => resolve("open"))),
    closed.then(() => "closed" as const),
  ]);
  return { session, settled, closed };
}

/** A Health/Check call whose request body never ends: the stream stays open until the server says. */
function heldStream(session: http2.ClientHttp2Session): Promise<"refused" | "open"> {
  const stream = session.request({
    ":method": "POST",
    ":path": "/grpc.health.v1.Health/Check",
    "content-type": "application/grpc",
    te: "trailers",
  });
  return new Promise((resolve) => {
    stream.on("error", () => {});
    stream.once("response", () => resolve("open"));
    stream.once("close", () =>
      resolve(stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM ? "refused" : "open"),
    );
    // Half a gRPC frame: the server waits for the rest; the stream is held open.
    stream.write(Buffer.from([0, 0, 0, 0, 10]));
  });
}

describe("gRPC port bounds", () => {
  const tokens = testTokens();
  let server: RpcServer;
  const sessions: http2.ClientHttp2Session[] = [];

  // A server of its own for each test: a connection the last test closed is not counted here.
  const options = {
    services: [bind(CatalogService, {})],
    host: "127.0.0.1",
    port: 0,
    tokens: { service: tokens.SERVICE_TOKEN },
    logger: pino({ level: "silent" }),
    maxConnections: 2,
    streamsPerConnection: 3,
    idleTimeoutSeconds: 1,
  };
  beforeEach(async () => {
    server = await startRpcServer(options);
  });
  afterEach(async () => {
    for (const session of sessions.splice(0)) session.destroy();
    await server?.shutdown(1_000);
  });

  const open = () => {
    const connection = connectTo(server.port);
    sessions.push(connection.session);
    return connection;
  };

  it("closes a connection past RPC_MAX_CONNECTIONS as it opens", async () => {
    const [first, second] = [open(), open()];
    expect(await Promise.all([first.settled, second.settled])).to.deep.equal(["open", "open"]);
    // Both stay busy (a stream each), so neither is closed as idle meanwhile.
    void heldStream(first.session);
    void heldStream(second.session);
    expect(await open().settled).to.equal("closed");
  });

  it("makes room at the cap: connections without a stream for over a second get GOAWAY, and a caller's retry connects", async () => {
    // A server whose idle timeout is far away: it is the cap that closes them here.
    await server.shutdown(1_000);
    server = await startRpcServer({ ...options, idleTimeoutSeconds: 60 });
    const [first, second] = [open(), open()];
    expect(await Promise.all([first.settled, second.settled])).to.deep.equal(["open", "open"]);
    // What is under test is the age of a connection without a stream (over a second): it must pass.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await open().settled, "past the cap").to.equal("closed");
    await Promise.all([first.closed, second.closed]);
    expect(await open().settled, "the retry").to.equal("open");
  });

  it("refuses streams past a connection's cap (REFUSED_STREAM), even from a client that ignores it", async () => {
    const { session } = open();
    // Five at once on a connection that may carry three: the two past the cap are refused at
    // once, the three others stay open (their request never ends).
    const refused = await new Promise<number>((resolve) => {
      let count = 0;
      for (let i = 0; i < 5; i++)
        void heldStream(session).then((outcome) => {
          if (outcome === "refused" && ++count === 2) resolve(count);
        });
    });
    expect(refused).to.equal(2);
  });

  it("closes a connection that has no stream for RPC_IDLE_TIMEOUT_SECONDS, and keeps one with a stream open", async () => {
    const idle = open();
    const busy = open();
    expect(await Promise.all([idle.settled, busy.settled])).to.deep.equal(["open", "open"]);
    const started = performance.now();
    void heldStream(busy.session);
    const closedAt = await idle.closed;
    expect(closedAt - started, "ms until closed").to.be.within(900, 3_000);
    expect(busy.session.closed, "the connection with a stream open").to.equal(false);
  });
});
