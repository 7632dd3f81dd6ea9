import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { fingerprintOf, keyCacheKey, sealKeyCacheEntry } from "@testrun/kit";
import {
  componentRedisUrl,
  type GatewayProcess,
  keyShapedSecret,
  startGateway,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import { call, expectError, freshAddress } from "./support.js";

/** What came back on a raw connection, and when, until it closed. */
interface RawExchange {
  socket: Socket;
  /** Resolves with everything the gateway wrote once the connection is closed, and when it was. */
  closed: Promise<{ text: string; closedAt: number; firstByteAt: number | undefined }>;
  /** Resolves at the first byte the gateway writes. */
  firstByte: Promise<number>;
}

/** Opens a connection to `base` and writes `text` on it (request heads written by hand: no client would send these). */
async function raw(base: string, text: string): Promise<RawExchange & { sentAt: number }> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  // Watched from the start: a connection past the cap may be reset as it opens.
  const exchange = watch(socket);
  const opened = await once(socket, "connect").then(
    () => true,
    () => false,
  );
  if (opened) await new Promise<void>((resolve) => socket.write(text, () => resolve()));
  return { ...exchange, sentAt: performance.now() };
}

function watch(socket: Socket): RawExchange {
  let text = "";
  let firstByteAt: number | undefined;
  let gotFirst: (at: number) => void = () => {};
  const firstByte = new Promise<number>((resolve) => {
    gotFirst = resolve;
  });
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    if (firstByteAt === undefined) {
      firstByteAt = performance.now();
      gotFirst(firstByteAt);
    }
    text += chunk;
  });
  socket.on("error", () => {});
  // Not events.once: it would reject on the reset that ends a refused connection.
  const closed = new Promise<{ text: string; closedAt: number; firstByteAt: number | undefined }>((resolve) =>
    socket.once("close", () => resolve({ text, closedAt: performance.now(), firstByteAt })),
  );
  return { socket, closed, firstByte };
}

const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const responsesIn = (text: string): number => text.match(/^HTTP\/1\.1 [1-5]\d\d /gm)?.length ?? 0;

/** A POST /v1/runs head announcing a large body, as a slow client sends it before its body. */
const slowBodyHead = (headers: Record<string, string>, length = 1_000_000): string =>
  `POST /v1/runs HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${Object.entries(
    headers,
  )
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;

/**
 * The gateway's edge (docs/security.md, "Resource limits"): credentials are judged from the
 * headers before any body is read, a refused request's connection closes, a body has a time limit,
 * headers too, and connections past the cap are refused. Real gateway processes over real sockets;
 * the services behind are a socket that never answers (nothing here may need them), and a working
 * key is one the verified-key cache holds, sealed as the keys service seals it.
 */
describe("gateway edge bounds: answer before the body, connections bounded", function () {
  this.timeout(60_000);
  const tokens = testTokens();
  const sockets = new Set<Socket>();
  let blackhole: Server;
  let redis: Redis;
  let gateway: GatewayProcess;
  let capped: GatewayProcess;
  const cap = 20;
  const key = keyShapedSecret();
  const revoked = keyShapedSecret();

  before(async () => {
    blackhole = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    blackhole.listen(0, "127.0.0.1");
    await once(blackhole, "listening");
    const nowhere = `http://127.0.0.1:${(blackhole.address() as { port: number }).port}`;
    const redisUrl = componentRedisUrl(String(process.env.REDIS_URL), "gateway");
    redis = new Redis(redisUrl);
    const until = Date.now() + 600_000;
    const valid = {
      state: "valid" as const,
      keyId: "00000000-0000-4000-8000-000000000001",
      projectId: "00000000-0000-4000-8000-000000000002",
      creatorMemberId: "00000000-0000-4000-8000-000000000003",
      keyCreatedAt: new Date().toISOString(),
      expiresAt: null,
    };
    for (const [secret, entry] of [
      [key, valid],
      [revoked, { state: "revoked" as const, keyId: valid.keyId }],
    ] as const) {
      const fingerprint = fingerprintOf(secret);
      await redis.set(
        keyCacheKey(fingerprint),
        sealKeyCacheEntry(tokens.KEY_CACHE_SECRET, fingerprint, entry, until),
        "EX",
        600,
      );
    }
    const env = {
      ...tokens,
      REDIS_URL: redisUrl,
      KEYS_URL: nowhere,
      CATALOG_URL: nowhere,
      RUNS_URL: nowhere,
      RPC_TIMEOUT_MS: "300",
      TRUST_PROXY_HOPS: "1",
      RATE_LIMIT_PER_MINUTE: "10000",
      AUTH_FAILURES_PER_MINUTE: "10000",
      HTTP_BODY_TIMEOUT_SECONDS: "1",
      HTTP_HEADERS_TIMEOUT_SECONDS: "1",
    };
    [gateway, capped] = await Promise.all([
      startGateway(env),
      startGateway({ ...env, HTTP_MAX_CONNECTIONS: String(cap), HTTP_HEADERS_TIMEOUT_SECONDS: "30" }),
    ]);
    // The first request of a process is slower (its code is compiled then): not the one timed.
    await fetch(`${gateway.http}/v1/project`, { headers: { "X-Forwarded-For": freshAddress() } });
  });
  after(async () => {
    await Promise.all([gateway?.stop("SIGKILL"), capped?.stop("SIGKILL")]);
    redis?.disconnect();
    for (const socket of sockets) socket.destroy();
    blackhole?.close();
  });

  describe("credentials are judged from the headers", () => {
    for (const [name, headers] of [
      ["without a key", {}],
      ["with a key that cannot be one", { Authorization: "Bearer not-a-key" }],
      ["with a revoked key", { "X-Api-Key": revoked }],
    ] as const) {
      it(`answers a slow body ${name} 401 within 100 ms of its headers, and closes the connection`, async () => {
        const exchange = await raw(
          gateway.http,
          slowBodyHead({ ...headers, "X-Forwarded-For": freshAddress() }),
        );
        const { text, firstByteAt } = await exchange.closed;
        expect(statusOf(text), text).to.equal(401);
        expect(text).to.match(/^Connection: close\r$/im);
        expect(Number(firstByteAt) - exchange.sentAt, "ms from headers to answer").to.be.below(100);
      });
    }

    it("answers 401 to Expect: 100-continue without a key, never asking for the body", async () => {
      const exchange = await raw(
        gateway.http,
        slowBodyHead({ Expect: "100-continue", "X-Forwarded-For": freshAddress() }, 20),
      );
      const { text } = await exchange.closed;
      expect(text).not.to.contain("100 Continue");
      expect(statusOf(text), text).to.equal(401);
    });

    it("asks a caller with a working key for its body (100 Continue), then reads it", async () => {
      const body = '{"testPlan": ';
      const exchange = await raw(
        gateway.http,
        slowBodyHead(
          { Expect: "100-continue", "X-Api-Key": key, "X-Forwarded-For": freshAddress() },
          body.length,
        ),
      );
      await exchange.firstByte;
      exchange.socket.write(body);
      await once(exchange.socket, "data");
      exchange.socket.end();
      const { text } = await exchange.closed;
      expect(text).to.match(/^HTTP\/1\.1 100 Continue/);
      expect(text).to.contain("HTTP/1.1 400 Bad Request");
      expect(text).to.contain("not valid JSON");
    });

    it("answers only the refused request of a pipelined pair: the one behind it is never read", async () => {
      const address = freshAddress();
      const second = `GET /v1/project HTTP/1.1\r\nHost: gateway\r\nX-Api-Key: ${key}\r\nX-Forwarded-For: ${address}\r\n\r\n`;
      const exchange = await raw(
        gateway.http,
        slowBodyHead({ "X-Forwarded-For": address }, 100_000) + second,
      );
      const { text } = await exchange.closed;
      expect(statusOf(text), text).to.equal(401);
      expect(responsesIn(text), text).to.equal(1);
    });

    it("answers a chunked body without a key 401 at once and closes", async () => {
      const head = `POST /v1/runs HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nX-Forwarded-For: ${freshAddress()}\r\n\r\n1\r\n{\r\n`;
      const exchange = await raw(gateway.http, head);
      const { text } = await exchange.closed;
      expect(statusOf(text), text).to.equal(401);
      expect(text).to.match(/^Connection: close\r$/im);
    });

    it("refuses 300 slow anonymous bodies at once while a keyed request is answered", async () => {
      const exchanges = await Promise.all(
        Array.from({ length: 300 }, () =>
          raw(gateway.http, slowBodyHead({ "X-Forwarded-For": freshAddress() })),
        ),
      );
      const keyed = await fetch(`${gateway.http}/v1/runs`, {
        method: "POST",
        headers: { "X-Api-Key": key, "Content-Type": "application/json", "X-Forwarded-For": freshAddress() },
        body: "[]",
      });
      expect(keyed.status).to.equal(400);
      const statuses = (await Promise.all(exchanges.map((e) => e.closed))).map((c) => statusOf(c.text));
      expect(new Set(statuses)).to.deep.equal(new Set([401]));
    });
  });

  describe("request bodies of a caller with a working key", () => {
    const post = (init: RequestInit & { headers: Record<string, string> }) =>
      call(gateway.http, "/v1/runs", {
        method: "POST",
        ...init,
        headers: { ...init.headers, "X-Api-Key": key },
      });
    const json = { "Content-Type": "application/json" };

    it("answers 413 payload_too_large to a body over 1 MiB", async () => {
      const body = JSON.stringify({ name: "x".repeat(1024 * 1024) });
      expectError(await post({ headers: json, body }), 413, "payload_too_large");
    });

    it("answers 413 to a chunked body that grows over 1 MiB", async () => {
      const chunk = new TextEncoder().encode(`"${"y".repeat(64 * 1024)}",`);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"tags":['));
          if (sent > 20) return controller.close();
          sent++;
          controller.enqueue(chunk);
        },
      });
      const answer = await post({ headers: json, body, duplex: "half" } as RequestInit & {
        headers: Record<string, string>;
      });
      expectError(answer, 413, "payload_too_large");
    });

    it("answers 400 invalid_request to malformed JSON", async () => {
      const answer = await post({ headers: json, body: '{"testPlan": ' });
      expectError(answer, 400, "invalid_request");
      expect(answer.body.error).to.contain("JSON");
    });

    it("answers 400 to a body that is not a JSON object, or not JSON at all", async () => {
      expectError(await post({ headers: json, body: '["smoke"]' }), 400, "invalid_request");
      expectError(await post({ headers: json, body: "42" }), 400, "invalid_request");
      const text = await post({ headers: { "Content-Type": "text/plain" }, body: '{"testPlan":"a"}' });
      expectError(text, 400, "invalid_request");
      expect(text.body.error).to.contain("application/json");
    });
  });

  describe("a body has a time limit", () => {
    it("reads the body of a caller with a working key, and answers 408 when it stalls past HTTP_BODY_TIMEOUT_SECONDS", async () => {
      const exchange = await raw(
        gateway.http,
        `${slowBodyHead({ "X-Api-Key": key, "X-Forwarded-For": freshAddress() }, 100)}{"testPlan"`,
      );
      const { text, firstByteAt } = await exchange.closed;
      expect(statusOf(text), text).to.equal(408);
      expect(text).to.contain('"code":"request_timeout"');
      expect(text).to.match(/^Connection: close\r$/im);
      const waited = Number(firstByteAt) - exchange.sentAt;
      expect(waited, "ms until 408").to.be.within(900, 2_500);
    });
  });

  describe("headers and idle connections have a time limit", () => {
    it("closes a connection whose headers are not complete within HTTP_HEADERS_TIMEOUT_SECONDS", async () => {
      const exchange = await raw(gateway.http, "GET /v1/project HTTP/1.1\r\nHost: gate");
      const { closedAt } = await exchange.closed;
      expect(closedAt - exchange.sentAt, "ms until closed").to.be.within(900, 3_000);
    });

    it("closes a connection that sends nothing within HTTP_HEADERS_TIMEOUT_SECONDS", async () => {
      const exchange = await raw(gateway.http, "");
      const { text, closedAt } = await exchange.closed;
      expect(text).to.equal("");
      expect(closedAt - exchange.sentAt, "ms until closed").to.be.within(900, 3_000);
    });
  });

  describe("connections past HTTP_MAX_CONNECTIONS", () => {
    it("closes a connection past the cap as it opens, and serves again once one is free", async () => {
      const held = await Promise.all(
        Array.from({ length: cap }, () => raw(capped.http, "GET /v1/project HTTP/1.1\r\nHost: gate")),
      );
      const refused = await raw(capped.http, "");
      const { text } = await refused.closed;
      expect(text, "nothing is answered past the cap").to.equal("");
      held[0]?.socket.destroy();
      await held[0]?.closed;
      // The gateway counts the freed connection once it has handled its close: a client retries
      // a refused connection, as this one does, a few times at most.
      let answer: Response | undefined;
      for (let attempt = 0; attempt < 5 && !answer; attempt++)
        answer = await fetch(`${capped.http}/healthz`).catch(() => undefined);
      expect(answer?.status).to.equal(200);
      for (const exchange of held) exchange.socket.destroy();
      await Promise.all(held.map((e) => e.closed));
    });

    it("makes room at the cap by closing idle keep-alive connections: a client's retry is served", async () => {
      // Kept-alive connections, each answered and now waiting for a next request that never
      // comes, opened one by one until the gateway refuses one: it is at its cap then.
      const idle: RawExchange[] = [];
      let refused = false;
      while (!refused && idle.length <= cap) {
        const exchange = await raw(capped.http, "GET /healthz HTTP/1.1\r\nHost: gate\r\n\r\n");
        refused = await Promise.race([
          exchange.firstByte.then(() => false),
          exchange.closed.then(() => true),
        ]);
        if (!refused) idle.push(exchange);
      }
      expect(refused, "a connection past the cap is refused").to.equal(true);
      expect(idle.length).to.be.within(1, cap);
      // The refusal swept the idle connections away: the client's retry finds room.
      await Promise.all(idle.map((e) => e.closed));
      const retry = await fetch(`${capped.http}/healthz`);
      expect(retry.status).to.equal(200);
    });

    it("makes room at the cap by closing connections slow to send their first headers: a client's retry is served", async () => {
      // The cap filled with connections whose headers never end (30 s allowed on this gateway).
      const slow = await Promise.all(
        Array.from({ length: cap }, () => raw(capped.http, "GET /v1/project HTTP/1.1\r\nHost: gate")),
      );
      // What is under test is the age of a slow connection (over a second): it must pass.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      // As many newcomers again: the gateway holds at most the cap, so some are refused, and that
      // sweeps the slow ones away (they would otherwise wait 30 s for their headers).
      const swept = performance.now();
      const newcomers = await Promise.all(Array.from({ length: cap }, () => raw(capped.http, "")));
      const closed = await Promise.all(slow.map((e) => e.closed));
      expect(Math.max(...closed.map((c) => c.closedAt)) - swept, "ms until all were closed").to.be.below(
        5_000,
      );
      expect(closed.map((c) => c.text).join(""), "closed without an answer").to.equal("");
      for (const newcomer of newcomers) newcomer.socket.destroy();
      // Served once the gateway has seen the newcomers go; a client retries a refused connection.
      let retry: Response | undefined;
      for (let attempt = 0; attempt < 5 && !retry; attempt++)
        retry = await fetch(`${capped.http}/healthz`).catch(() => undefined);
      expect(retry?.status).to.equal(200);
    });
  });
});
