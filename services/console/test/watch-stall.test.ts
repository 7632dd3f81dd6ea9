// A WatchRun stream whose browser stopped reading (services/console/src/http/write-stall.ts): the
// console's own app and run handlers over real HTTP/1.1, as the browser's connect-web calls them,
// its stream slots real. Upstream, a RunsService (Connect, in memory) streams a large run as fast as
// it is read, so a client that reads nothing fills the socket's buffers within a few messages. The
// session lookup is replaced (nothing here is about sessions): every call is one member's.

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, type Socket } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunSchema, RunStatus, RunsService, TestResultSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { createLogger } from "@testrun/kit";
import { eventually } from "@testrun/testing";
import { expect } from "chai";
import { createConsoleApp } from "../src/http/app.js";
import { AuthAttempts } from "../src/http/auth-limit.js";
import { ConsoleCookies } from "../src/http/cookies.js";
import { runHandlers } from "../src/rpc/run-handlers.js";
import { StreamSlots } from "../src/rpc/stream-slots.js";
import type { Viewers } from "../src/viewer.js";

const appUrl = "http://console.test";
const stallMs = 1_000;
const cookie = "testrun_session=s".padEnd(60, "s");

/** A run of 100 tests with long names: about 1 MB of JSON a message. */
const bigRun = (version: number) =>
  create(RunSchema, {
    id: "run_1",
    projectId: "prj_1",
    status: RunStatus.RUNNING,
    version: BigInt(version),
    tests: Array.from({ length: 100 }, (_, i) =>
      create(TestResultSchema, { id: `tr_${i}`, name: `${i} ${"x".repeat(10_000)}` }),
    ),
  });

describe("console: a WatchRun whose browser stopped reading", function () {
  this.timeout(60_000);
  let server: Server;
  let base: string;
  let streams: StreamSlots;
  /** Upstream WatchRun streams whose caller has not left (the runs service's slots). */
  let upstreamOpen = 0;
  const sockets: Socket[] = [];

  before(async () => {
    const runs = createClient(
      RunsService,
      createRouterTransport(({ service }) =>
        service(RunsService, {
          async *watchRun(_req, ctx) {
            // Counted until the caller leaves, as the runs service frees its slot then.
            upstreamOpen++;
            ctx.signal.addEventListener("abort", () => upstreamOpen--, { once: true });
            for (let version = 1; !ctx.signal.aborted; version++) {
              yield { run: bigRun(version) };
              await new Promise((resolve) => setImmediate(resolve));
            }
          },
        }),
      ),
    );
    const none = createRouterTransport(() => {});
    streams = new StreamSlots({ perSession: 1, perProject: 10 });
    const viewers = {
      // The API's request gate resolves the session before the body (rpc/session-gate.ts).
      ofSession: async () => ({
        email: "a@example.test",
        expiresAt: new Date(Date.now() + 3_600_000),
        memberships: [],
      }),
      actorForProject: async () => ({ actor: { kind: { case: "memberId", value: "mem_1" } } }),
    } as unknown as Viewers;
    const unused = {} as never;
    const app = createConsoleApp({
      appUrl,
      logger: createLogger("console-watch-stall-test", "silent"),
      isReady: () => true,
      consoleService: runHandlers({
        viewers,
        catalog: createClient(CatalogService, none),
        keys: createClient(KeysService, none),
        billing: createClient(BillingService, none),
        runs,
        watchWindowMs: 60_000,
        streams,
      }),
      webRoot: "/nonexistent",
      viewers,
      runs,
      automation: createClient(AutomationService, none),
      sessions: unused,
      links: unused,
      directory: unused,
      cookies: new ConsoleCookies(appUrl),
      authAttempts: new AuthAttempts(100),
      badgeRequests: new AuthAttempts(100),
      writeStallMs: stallMs,
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    server.close();
  });

  /** The browser's client (connect-web speaks the Connect protocol over HTTP/1.1 too). */
  const browser = createClient(
    ConsoleService,
    createConnectTransport({
      baseUrl: `${appUrl}/api`,
      httpVersion: "1.1",
      interceptors: [
        (next) => (req) => {
          req.header.set("Cookie", cookie);
          return next({ ...req, url: req.url.replace(appUrl, base) });
        },
      ],
    }),
  );

  /** A watcher that reads its first message: the slot it took is held until `close`. */
  async function watcher() {
    const abort = new AbortController();
    const messages = browser
      .watchRun({ projectId: "prj_1", runId: "run_1" }, { signal: abort.signal })
      [Symbol.asyncIterator]();
    const first = await messages.next();
    return { first, close: () => abort.abort(), next: () => messages.next() };
  }

  /** WatchRun over a raw socket that sends the request, then never reads the answer. */
  function nonReader(): Socket {
    const body = Buffer.from(JSON.stringify({ projectId: "prj_1", runId: "run_1" }));
    const envelope = Buffer.alloc(5 + body.length);
    envelope.writeUInt32BE(body.length, 1);
    body.copy(envelope, 5);
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, "127.0.0.1");
    sockets.push(socket);
    socket.pause();
    socket.write(
      [
        "POST /api/testrun.console.v1.ConsoleService/WatchRun HTTP/1.1",
        "Host: console.test",
        "Content-Type: application/connect+json",
        "Connect-Protocol-Version: 1",
        `Cookie: ${cookie}`,
        `Content-Length: ${envelope.length}`,
        "",
        "",
      ].join("\r\n"),
    );
    socket.write(envelope);
    return socket;
  }

  it("ends the stream within the bound of its writes stalling, and a new watcher gets the slot", async () => {
    nonReader();
    await eventually(async () => (streams.open === 1 ? true : undefined), "the non-reader's stream open");
    // The session's one slot is the non-reader's while its stream lives.
    const refused = await watcher().then(
      () => undefined,
      (error: unknown) => ConnectError.from(error),
    );
    expect(refused?.code).to.equal(Code.ResourceExhausted);

    const started = Date.now();
    await eventually(async () => (streams.open === 0 ? true : undefined), "the stalled stream ended", 20_000);
    // Its buffers fill within a few messages; then the bound: well under the 60 s window.
    expect(Date.now() - started).to.be.below(stallMs + 10_000);
    // The runs service saw its caller leave: its slot there is free too.
    await eventually(async () => (upstreamOpen === 0 ? true : undefined), "the upstream stream ended");

    const next = await watcher();
    expect(next.first.value?.run?.run?.version).to.equal(1n);
    next.close();
    await eventually(async () => (streams.open === 0 ? true : undefined), "the reader's stream closed");
  });

  it("never ends the stream of a client that reads, however many messages it takes", async () => {
    const reader = await watcher();
    // Reading 20 MB, well past what the socket's buffers hold, for longer than the bound.
    const started = Date.now();
    let read = 1;
    while (read < 20 || Date.now() - started < 2 * stallMs) {
      const message = await reader.next();
      expect(message.done, "the stream ended early").to.equal(false);
      read++;
    }
    expect(streams.open).to.equal(1);
    reader.close();
    await eventually(async () => (streams.open === 0 ? true : undefined), "the reader's stream closed");
  });
});
