import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import {
  componentRedisUrl,
  type GatewayProcess,
  keyShapedSecret,
  startGateway,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import { buildOpenApiDocument } from "../src/api/openapi.js";
import { llmsTxt } from "../src/llms-txt.js";
import { type Answer, call, expectError, freshAddress, requestLogLine } from "./support.js";

/**
 * The gateway's HTTP surface that needs no working key: authentication failures, the limit on
 * failed authentications, routing errors, bodies, request ids and CORS. The keys service here is
 * a socket that accepts connections and never answers, so anything that reaches it runs into the
 * gRPC deadline.
 */
describe("gateway HTTP surface without a working key", () => {
  const tokens = testTokens();
  const failuresPerMinute = 5;
  let blackhole: Server;
  const sockets = new Set<Socket>();
  let env: Record<string, string>;
  let gateway: GatewayProcess;
  let secondGateway: GatewayProcess;
  /** Waits long for the keys service: what it sends there is still waiting while the rest is answered. */
  let patientGateway: GatewayProcess;

  before(async () => {
    blackhole = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    blackhole.listen(0, "127.0.0.1");
    await once(blackhole, "listening");
    const port = (blackhole.address() as { port: number }).port;
    env = {
      ...tokens,
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "gateway"),
      KEYS_URL: `http://127.0.0.1:${port}`,
      CATALOG_URL: `http://127.0.0.1:${port}`,
      RPC_TIMEOUT_MS: "300",
      AUTH_FAILURES_PER_MINUTE: String(failuresPerMinute),
      // Each test sends its own X-Forwarded-For address (support.ts), as a proxy in front would.
      TRUST_PROXY_HOPS: "1",
    };
    [gateway, secondGateway, patientGateway] = await Promise.all([
      startGateway(env),
      startGateway(env),
      startGateway({ ...env, RPC_TIMEOUT_MS: "10000" }),
    ]);
  });
  after(async () => {
    await Promise.all([
      gateway?.stop("SIGKILL"),
      secondGateway?.stop("SIGKILL"),
      patientGateway?.stop("SIGKILL"),
    ]);
    for (const socket of sockets) socket.destroy();
    blackhole?.close();
  });

  describe("authentication", () => {
    it("answers 401 unauthorized to a request without a key, saying how to send one", async () => {
      const answer = await call(gateway.http, "/v1/project");
      expectError(answer, 401, "unauthorized");
      expect(answer.body.error).to.contain("Authorization: Bearer");
      expect(answer.body.error).to.contain("X-Api-Key");
      expect(answer.headers.has("ratelimit-limit")).to.equal(false);
    });

    for (const endpoint of ["/v1/project", "/v1/environments", "/v1/test-plans", "/v1/test-cases"]) {
      it(`answers 401 to a garbage key on ${endpoint} in either header`, async () => {
        const bearer = await call(gateway.http, endpoint, { headers: { Authorization: "Bearer not-a-key" } });
        expectError(bearer, 401, "unauthorized");
        const apiKey = await call(gateway.http, endpoint, { headers: { "X-Api-Key": "not-a-key" } });
        expectError(apiKey, 401, "unauthorized");
      });
    }

    it("answers 401 to an Authorization header that is not a bearer key", async () => {
      const answer = await call(gateway.http, "/v1/project", {
        headers: { Authorization: "Basic dXNlcjpwdw==" },
      });
      expectError(answer, 401, "unauthorized");
      expect(answer.body.error).to.contain("Bearer");
    });

    it("answers 400 when the two headers carry different keys", async () => {
      const answer = await call(gateway.http, "/v1/project", {
        headers: { Authorization: `Bearer ${keyShapedSecret()}`, "X-Api-Key": keyShapedSecret() },
      });
      expectError(answer, 400, "invalid_request");
    });

    it("answers 500 internal, within the gRPC deadline, when the keys service does not answer", async () => {
      const secret = keyShapedSecret();
      const answer = await call(gateway.http, "/v1/test-plans", { headers: { "X-Api-Key": secret } });
      expectError(answer, 500, "internal");
      expect(answer.body).to.deep.equal({ error: "internal error", code: "internal" });
      const requestId = String(answer.headers.get("x-request-id"));
      const logged = await gateway.waitForLine((l) => l.includes(requestId) && l.includes('"level":"error"'));
      expect(logged).to.contain("VerifyKey");
      expect((await requestLogLine(gateway, answer)).status).to.equal(500);
      expect(gateway.output().join("\n")).not.to.contain(secret);
    });
  });

  describe("failed authentications per client address", () => {
    const fail = (target: GatewayProcess, address: string, headers: Record<string, string> = {}) =>
      call(target.http, "/v1/environments", { address, headers: { "X-Api-Key": "wrong", ...headers } });

    it(`answers 429 with Retry-After once an address failed ${failuresPerMinute} times in a minute`, async () => {
      const address = freshAddress();
      for (let i = 0; i < failuresPerMinute; i++)
        expectError(await fail(gateway, address), 401, "unauthorized");
      const refused = await fail(gateway, address);
      expectError(refused, 429, "rate_limited");
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).to.be.within(1, 60);
      expect(Number.isInteger(retryAfter)).to.equal(true);
    });

    it("keeps refusing the blocked address whatever it sends, without asking the keys service", async () => {
      const address = freshAddress();
      for (let i = 0; i <= failuresPerMinute; i++) await fail(gateway, address);
      // A key-shaped secret would go to the (silent) keys service and end in a 500; blocked, it never gets there.
      const keyShaped = await call(gateway.http, "/v1/project", {
        address,
        headers: { Authorization: `Bearer ${keyShapedSecret()}` },
      });
      expectError(keyShaped, 429, "rate_limited");
      expect(Number(keyShaped.headers.get("retry-after"))).to.be.at.least(1);
      expectError(await call(gateway.http, "/v1/project", { address }), 429, "rate_limited");
    });

    it("counts a secret before it is verified, so a parallel burst gets no more than the limit verified", async () => {
      const address = freshAddress();
      const abort = new AbortController();
      const refusedAtOnce = failuresPerMinute * 2;
      const answered: number[] = [];
      const { promise: enoughAnswered, resolve } = Promise.withResolvers<void>();
      const burst = Array.from({ length: failuresPerMinute + refusedAtOnce }, () =>
        call(patientGateway.http, "/v1/project", {
          address,
          headers: { "X-Api-Key": keyShapedSecret() },
          signal: abort.signal,
        }).then(
          (answer) => {
            answered.push(answer.status);
            if (answered.length === refusedAtOnce) resolve();
          },
          () => {},
        ),
      );
      try {
        await enoughAnswered;
        // Without counting in advance, all of them would have gone to the keys service (500s).
        expect(answered).to.deep.equal(Array(refusedAtOnce).fill(429));
      } finally {
        abort.abort();
        await Promise.all(burst);
      }
    });

    it("counts per address: another address is not affected", async () => {
      const address = freshAddress();
      for (let i = 0; i <= failuresPerMinute; i++) await fail(gateway, address);
      expectError(await fail(gateway, freshAddress()), 401, "unauthorized");
    });

    it("shares the count between gateway processes", async () => {
      const address = freshAddress();
      for (let i = 0; i < failuresPerMinute; i++) {
        expectError(await fail(i % 2 ? gateway : secondGateway, address), 401, "unauthorized");
      }
      expectError(await fail(secondGateway, address), 429, "rate_limited");
      expectError(await fail(gateway, address), 429, "rate_limited");
    });
  });

  describe("routing", () => {
    it("answers 404 not_found to an unknown path, with or without a key", async () => {
      expectError(await call(gateway.http, "/v1/nothing-here"), 404, "not_found");
      expectError(
        await call(gateway.http, "/v2/project", { headers: { "X-Api-Key": "x" } }),
        404,
        "not_found",
      );
    });

    it("answers 405 method_not_allowed with Allow to a known path with another method", async () => {
      const del = await call(gateway.http, "/v1/project", { method: "DELETE" });
      expectError(del, 405, "method_not_allowed");
      expect(allowOf(del)).to.deep.equal(["GET", "HEAD"]);
      const post = await call(gateway.http, "/v1/test-cases", { method: "POST", body: "{}" });
      expectError(post, 405, "method_not_allowed");
      expect(allowOf(post)).to.deep.equal(["GET", "HEAD"]);
      const put = await call(gateway.http, "/v1/runs", { method: "PUT" });
      expectError(put, 405, "method_not_allowed");
      expect(allowOf(put)).to.deep.equal(["GET", "HEAD", "POST"]);
      const patch = await call(gateway.http, "/v1/runs/run_01jd3k", { method: "PATCH" });
      expect(allowOf(patch)).to.deep.equal(["GET", "HEAD"]);
    });

    it("answers OPTIONS, CORS preflights included, with 405 and Allow and no Access-Control-* header", async () => {
      for (const path of ["/v1/project", "/v1/runs"]) {
        const answer = await call(gateway.http, path, {
          method: "OPTIONS",
          headers: {
            Origin: "https://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization",
          },
        });
        expectError(answer, 405, "method_not_allowed");
        expect(answer.headers.get("allow")).to.contain("GET");
      }
    });

    it("answers 400 to an unknown query parameter, naming it", async () => {
      const answer = await call(gateway.http, "/v1/test-cases?tags=smoke");
      expectError(answer, 400, "invalid_request");
      expect(answer.body.error).to.contain('"tags"');
    });

    it("serves the OpenAPI document at /v1/openapi.json without a key, cacheable, as the gateway builds it", async () => {
      const answer = await call(gateway.http, "/v1/openapi.json");
      expect(answer.status).to.equal(200);
      expect(answer.body).to.deep.equal(buildOpenApiDocument());
      expect(answer.body.openapi).to.equal("3.1.0");
      expect(answer.headers.get("cache-control")).to.equal("public, max-age=3600");
      expect(answer.headers.get("etag")).to.match(/^"[A-Za-z0-9_-]+"$/);
      expect(answer.headers.has("ratelimit-limit")).to.equal(false);
      // A key that does not work changes nothing: the document asks for none.
      const withBadKey = await call(gateway.http, "/v1/openapi.json", {
        headers: { "X-Api-Key": "not-a-key" },
      });
      expect(withBadKey.status).to.equal(200);
      expect(withBadKey.headers.get("etag")).to.equal(answer.headers.get("etag"));
    });

    it("serves /llms.txt without a key: how an agent uses the API, as docs/agents.md says", async () => {
      const response = await fetch(`${gateway.http}/llms.txt`);
      expect(response.status).to.equal(200);
      expect(response.headers.get("content-type")).to.equal("text/plain; charset=utf-8");
      expect(response.headers.get("cache-control")).to.equal("public, max-age=3600");
      expect(response.headers.has("ratelimit-limit")).to.equal(false);
      const text = await response.text();
      expect(text).to.equal(llmsTxt);
      expect(text).to.contain("/v1/openapi.json");
      const agents = await readFile(new URL("../../../docs/agents.md", import.meta.url), "utf8");
      expect(agents).to.contain(`\`\`\`\`markdown\n${text}\`\`\`\`\n`);
    });

    it("serves /healthz without a key", async () => {
      const answer = await call(gateway.http, "/healthz");
      expect(answer.status).to.equal(200);
      expect(answer.body).to.deep.equal({ status: "ok" });
    });
  });

  describe("request bodies", () => {
    const post = (init: RequestInit) => call(gateway.http, "/v1/runs", { method: "POST", ...init });
    const json = { "Content-Type": "application/json" };

    it("asks for the key before reading the body: a sound body without one gets 401", async () => {
      const answer = await post({ headers: json, body: JSON.stringify({ testPlan: "Smoke" }) });
      expectError(answer, 401, "unauthorized");
    });
  });

  describe("request ids and logs", () => {
    it("generates an X-Request-Id and logs the request under it", async () => {
      const answer = await call(gateway.http, "/v1/nothing-here");
      const requestId = String(answer.headers.get("x-request-id"));
      expect(requestId).to.match(/^[0-9a-f-]{36}$/);
      expect(await requestLogLine(gateway, answer)).to.include({
        requestId,
        status: 404,
        method: "GET",
        path: "/v1/nothing-here",
      });
    });

    it("keeps a sane incoming X-Request-Id and replaces anything else", async () => {
      const kept = await call(gateway.http, "/v1/project", {
        headers: { "X-Request-Id": "ci-job-1234.step:5" },
      });
      expect(kept.headers.get("x-request-id")).to.equal("ci-job-1234.step:5");
      for (const bad of ["short", "has spaces in it", "x".repeat(129), 'quote"injection']) {
        const replaced = await call(gateway.http, "/v1/project", { headers: { "X-Request-Id": bad } });
        expect(replaced.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
      }
    });

    it("never logs a presented key or the Authorization header", async () => {
      const secrets = [keyShapedSecret(), "garbage-secret-value-123"];
      const answers = [
        await call(gateway.http, "/v1/project", { headers: { Authorization: `Bearer ${secrets[0]}` } }),
        await call(gateway.http, "/v1/project", { headers: { "X-Api-Key": String(secrets[1]) } }),
      ];
      for (const answer of answers) await requestLogLine(gateway, answer);
      const output = gateway.output().join("\n");
      for (const secret of secrets) expect(output).not.to.contain(secret);
      expect(output.toLowerCase()).not.to.contain("bearer");
    });

    it("logs and echoes a path with a key pasted into it with the key replaced", async () => {
      const secret = keyShapedSecret();
      const asRunId = await call(gateway.http, `/v1/runs/${secret}`);
      expectError(asRunId, 401, "unauthorized");
      expect(await requestLogLine(gateway, asRunId)).to.include({ path: "/v1/runs/trk_[redacted]" });
      // Cut short, or where no route is: the 404 error names the path without it too.
      const unrouted = await call(gateway.http, `/v1/nothing/${secret.slice(0, 20)}/x`);
      expectError(unrouted, 404, "not_found");
      expect(unrouted.body.error).to.equal("no such path: /v1/nothing/trk_[redacted]/x");
      expect(await requestLogLine(gateway, unrouted)).to.include({ path: "/v1/nothing/trk_[redacted]/x" });
      expect(gateway.output().join("\n")).not.to.contain(secret.slice(4, 20));
      // Written with percent-escapes, it is the same key to whoever reads the log.
      const escaped = `%74rk%5F${secret.slice(4, 8)}%${secret.charCodeAt(8).toString(16)}${secret.slice(9)}`;
      const asEscapedRunId = await call(gateway.http, `/v1/runs/${escaped}`);
      expect(await requestLogLine(gateway, asEscapedRunId)).to.include({ path: "/v1/runs/trk_[redacted]" });
      expect(gateway.output().join("\n")).not.to.contain(secret.slice(9));
    });
  });
});

/** The methods of an Allow header, sorted. */
function allowOf(answer: Answer): string[] {
  return String(answer.headers.get("allow"))
    .split(",")
    .map((method) => method.trim())
    .sort();
}

describe("gateway without a trusted proxy in front", () => {
  let gateway: GatewayProcess;

  before(async () => {
    // Counts per connection address (127.0.0.1 here) live in a Redis database of their own, so
    // they cannot block any other suite's requests from 127.0.0.1.
    gateway = await startGateway({
      ...testTokens(),
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "gateway", 11),
      KEYS_URL: "http://127.0.0.1:1",
      CATALOG_URL: "http://127.0.0.1:1",
      AUTH_FAILURES_PER_MINUTE: "3",
    });
  });
  after(async () => {
    await gateway?.stop("SIGKILL");
  });

  it("ignores X-Forwarded-For, so a client cannot escape the failed-authentication limit by inventing addresses", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++) {
      answers.push(
        await call(gateway.http, "/v1/project", { address: freshAddress(), headers: { "X-Api-Key": "x" } }),
      );
    }
    expect(answers.map((answer) => answer.status)).to.deep.equal([401, 401, 401, 429]);
    expect((await requestLogLine(gateway, answers[0] as Answer)).ip).to.equal("127.0.0.1");
  });
});
