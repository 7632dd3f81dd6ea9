// What a failed HTTP step keeps of the response it got (the http-response artifact): the status,
// headers, body and timing of a real response from a real server, with a variable's value that the
// server sends back in every form redacted as `{{NAME}}`.
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getCACertificates, setDefaultCACertificates } from "node:tls";
import { stepsFromFile } from "@testrun/content-file";
import { ArtifactKind } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { echoes, fragments, secret, secretWindows } from "@testrun/testing/redaction-encodings";
import { expect } from "chai";
import { type HttpEvidence, maxEvidenceBodyBytes, shownResponseHeaders } from "../src/steps/http-evidence.js";
import { runSteps } from "../src/steps/runner.js";
import { localEgress } from "./target.js";

/** The body of /leak: the value in every form a target sends it back in, a line each, then JSON. */
const leakBody = (value: string) =>
  [
    "the login failed",
    ...Object.values(echoes).map((encode) => `[${encode(value)}]`),
    JSON.stringify({ error: "bad token", token: value }),
  ].join("\n");

/** The target's answers. Each route is a failure a test would want to read. */
function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://target");
  const echoed = url.searchParams.get("token") ?? "";
  switch (url.pathname) {
    case "/leak":
      // The value sent back in the body in every form a target uses, and in headers.
      res.writeHead(500, {
        "content-type": "text/plain; charset=utf-8",
        location: `/again?next=${encodeURIComponent(echoed)}`,
        "x-request-id": "req-42",
        "x-echo": encodeURIComponent(echoed),
        "set-cookie": `session=${encodeURIComponent(echoed)}; HttpOnly`,
      });
      res.end(leakBody(echoed));
      return;
    case "/big": {
      const size = Number(url.searchParams.get("bytes"));
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8" });
      // Three-byte characters, so that 16 KiB falls inside one; the value past the first 16 KiB.
      const text = "€".repeat(Math.ceil(size / 3));
      res.end(`${text.slice(0, 6000)}${echoed}${text.slice(6000)}`);
      return;
    }
    case "/slow":
      // Headers after 60 ms, the body's end 60 ms later: the stages must tell them apart.
      setTimeout(() => {
        res.writeHead(500, { "content-type": "application/json" });
        res.write('{"error":');
        setTimeout(() => res.end('"slow"}'), 60);
      }, 60);
      return;
    case "/partly":
      // The value cut short by the target: no form of it is whole, 10 of its characters are.
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`expired: ${echoed.slice(0, 10)}`);
      return;
    case "/nested":
      // A JSON text inside a JSON string: the value escaped twice, a form no redaction knows raw.
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ upstream: JSON.stringify({ token: echoed }), count: 2 }));
      return;
    case "/json":
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: false }));
      return;
  }
  res.writeHead(404).end();
}

interface Target {
  url: string;
  close(): Promise<void>;
}

async function listen(
  server: ReturnType<typeof createServer>,
  scheme: string,
  host: string,
): Promise<Target> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `${scheme}://${host}:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}

const startTarget = () => listen(createServer(route), "http", "127.0.0.1");

const vars = { SECRET: secret };

const run = (baseUrl: string, steps: unknown[], options: { maxBodyBytes?: number } = {}) =>
  runSteps(stepsFromFile(steps, "steps"), { baseUrl, variables: vars, egress: localEgress, ...options });

/** The one http-response artifact of a failed run, its bytes as text and parsed. */
async function evidenceOf(outcome: Awaited<ReturnType<typeof run>>, step = 1) {
  expect(outcome.passed, outcome.summary).to.equal(false);
  const kept = outcome.artifacts.filter((artifact) => artifact.kind === ArtifactKind.HTTP_RESPONSE);
  expect(kept.map((a) => [a.name, a.contentType, a.step])).to.deep.equal([
    ["http-response", "application/json", step],
  ]);
  const text = Buffer.from(kept[0]?.content ?? []).toString("utf8");
  return { text, evidence: JSON.parse(text) as HttpEvidence };
}

/** No form of the secret, and no 8 characters of it in a row, anywhere in `text`. */
function expectNoSecret(text: string): void {
  for (const [name, encode] of Object.entries(echoes)) {
    expect(text, name).not.to.include(encode(secret));
    for (const window of secretWindows(encode)) expect(text, `${name}: ${window}`).not.to.include(window);
  }
  for (const fragment of fragments(secret)) expect(text).not.to.include(fragment);
}

describe("a failed HTTP step's response, kept as the http-response artifact", () => {
  let target: Target;
  before(async () => {
    target = await startTarget();
  });
  after(() => target.close());

  it("keeps the status, the headers and the body, the value sent back in every form as {{SECRET}}", async () => {
    const outcome = await run(target.url, [
      {
        name: "log in",
        http: { method: "GET", path: "/leak", query: { token: "{{SECRET}}" } },
        expect: { status: 200 },
      },
    ]);
    expect(outcome.summary).to.equal('step 1 "log in": expected status 200, got 500');
    const { text, evidence } = await evidenceOf(outcome);
    expectNoSecret(text);

    expect(evidence.request).to.deep.equal({ method: "GET", url: `${target.url}/leak?token={{SECRET}}` });
    expect(evidence).to.include({ status: 500, statusText: "Internal Server Error" });
    const lines = evidence.body.text?.split("\n") ?? [];
    // Every echoed form became the token (a base64 one keeps the characters mixing it with its
    // neighbours: redaction.ts base64Cores).
    expect(lines.slice(1, -1)).to.have.length(Object.keys(echoes).length);
    for (const line of lines.slice(1, -1))
      expect(line).to.match(/^\[[A-Za-z0-9 ]*\{\{SECRET\}\}[A-Za-z0-9=]*\]$/);
    expect(lines.slice(1, 5)).to.deep.equal(["[{{SECRET}}]", "[{{SECRET}}]", "[{{SECRET}}]", "[{{SECRET}}]"]);
    expect(JSON.parse(lines.at(-1) ?? "")).to.deep.equal({ error: "bad token", token: "{{SECRET}}" });
    expect(evidence.body).to.include({
      truncated: false,
      complete: true,
      receivedBytes: Buffer.byteLength(leakBody(secret)),
    });

    const headers = new Map(evidence.headers.map((h) => [h.name, h]));
    // Allow-listed: shown, redacted; any other: named, its value not kept.
    expect(headers.get("location")).to.deep.equal({ name: "location", value: "/again?next={{SECRET}}" });
    expect(headers.get("x-request-id")).to.deep.equal({ name: "x-request-id", value: "req-42" });
    expect(headers.get("content-type")?.value).to.equal("text/plain; charset=utf-8");
    expect(headers.get("x-echo")).to.deep.equal({ name: "x-echo" });
    expect(headers.get("set-cookie")).to.deep.equal({ name: "set-cookie" });
    expect(shownResponseHeaders.has("x-echo")).to.equal(false);
  });

  it("keeps the first 16 KiB of a longer body, whole characters, and says how much there was", async () => {
    const outcome = await run(target.url, [
      { name: "big", http: { method: "GET", path: "/big", query: { bytes: "40000", token: "{{SECRET}}" } } },
    ]);
    const { text, evidence } = await evidenceOf(outcome);
    expectNoSecret(text);
    const body = evidence.body.text ?? "";
    // 16 KiB holds 5461 characters of three bytes and a third of one, left out.
    expect(body).to.equal("€".repeat(Math.floor(maxEvidenceBodyBytes / 3)));
    expect(evidence.body).to.include({
      truncated: true,
      complete: true,
      receivedBytes: 40002 + Buffer.byteLength(secret),
    });
  });

  it("says when reading stopped at RESPONSE_MAX_BYTES, before the body's end", async () => {
    const outcome = await run(
      target.url,
      [{ name: "big", http: { method: "GET", path: "/big?bytes=90000" } }],
      { maxBodyBytes: 32 * 1024 },
    );
    const { evidence } = await evidenceOf(outcome);
    expect(evidence.body).to.include({ truncated: true, complete: false, receivedBytes: 32 * 1024 });
  });

  it("withholds a body holding part of a value in a form that could not be replaced", async () => {
    const outcome = await run(target.url, [
      { name: "cut", http: { method: "GET", path: "/partly", query: { token: "{{SECRET}}" } } },
    ]);
    const { text, evidence } = await evidenceOf(outcome);
    expect(text).not.to.include(secret.slice(0, 10));
    expect(evidence.body.text).to.equal(null);
    expect(evidence.body.withheld).to.match(/part of a variable's value/);
    expect(evidence.status).to.equal(500);
  });

  it("writes a JSON body again from its parsed value when a value sits escaped twice inside it", async () => {
    const outcome = await run(target.url, [
      { name: "nested", http: { method: "GET", path: "/nested", query: { token: "{{SECRET}}" } } },
    ]);
    const { text, evidence } = await evidenceOf(outcome);
    expectNoSecret(text);
    expect(evidence.body.rewritten).to.match(/written again/);
    expect(JSON.parse(evidence.body.text ?? "")).to.deep.equal({
      upstream: JSON.stringify({ token: "{{SECRET}}" }),
      count: 2,
    });
  });

  it("keeps the response of a step whose checks on the body failed, and nothing of a step that passed", async () => {
    const outcome = await run(target.url, [
      { name: "fine", http: { method: "GET", path: "/json" } },
      { name: "json", http: { method: "GET", path: "/json" }, expect: { json: { "$.ok": true } } },
    ]);
    expect(outcome.summary).to.equal('step 2 "json": expected $.ok = true, got false');
    const { evidence } = await evidenceOf(outcome, 2);
    expect(evidence.body.text).to.equal('{"ok":false}');
    expect(evidence.status).to.equal(200);
  });

  it("keeps nothing when no response came (no connection)", async () => {
    const gone = await startTarget();
    await gone.close();
    const outcome = await run(gone.url, [{ name: "down", http: { method: "GET", path: "/json" } }]);
    expect(outcome.summary).to.equal('step 1 "down": request failed: could not connect to the host');
    expect(outcome.artifacts).to.deep.equal([]);
  });
});

describe("a failed HTTP step's timing", () => {
  it("gives connect, first byte and total in order on a new connection, none of DNS or TLS to an IP over http", async () => {
    const target = await startTarget();
    try {
      const { evidence } = await evidenceOf(
        await run(target.url, [{ name: "slow", http: { method: "GET", path: "/slow" } }]),
      );
      const { timings } = evidence;
      expect(timings).to.include({ connectionReused: false, dnsMs: null, tlsMs: null });
      const connect = timings.connectMs as number;
      expect(connect).to.be.a("number").and.at.least(0);
      // The target waits 60 ms before its headers and 60 more before the body's end.
      expect(timings.firstByteMs - connect).to.be.at.least(55);
      expect(timings.totalMs - timings.firstByteMs).to.be.at.least(55);

      // A later request on a connection an earlier one opened has no stages of its own. undici may
      // open a second connection before the first is back in its pool: by the third request, one
      // of the two is free.
      const later = [];
      for (let tries = 0; tries < 3 && !later.at(-1)?.connectionReused; tries++)
        later.push(
          (
            await evidenceOf(
              await run(target.url, [{ name: "slow", http: { method: "GET", path: "/slow" } }]),
            )
          ).evidence.timings,
        );
      for (const timings of later) {
        if (timings.connectionReused)
          expect(timings).to.include({ dnsMs: null, connectMs: null, tlsMs: null });
        else expect(timings.connectMs).to.be.a("number");
        expect(timings.firstByteMs).to.be.at.least(55);
      }
      expect(later.at(-1)?.connectionReused).to.equal(true);
    } finally {
      await target.close();
    }
  });

  describe("over https to a host name", () => {
    let dir: string;
    let target: Target;
    const defaults = getCACertificates("default");
    before(async () => {
      // A self-signed certificate for localhost, trusted by this process for these tests only.
      dir = mkdtempSync(join(tmpdir(), "http-evidence-"));
      execFileSync(
        "openssl",
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"]
          .concat(["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"])
          .concat(["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")]),
        { stdio: "ignore" },
      );
      const cert = readFileSync(join(dir, "cert.pem"), "utf8");
      setDefaultCACertificates([...defaults, cert]);
      const server = createTlsServer({ cert, key: readFileSync(join(dir, "key.pem")) }, route);
      target = await listen(server as unknown as ReturnType<typeof createServer>, "https", "localhost");
    });
    after(async () => {
      setDefaultCACertificates(defaults);
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("gives DNS, connect, TLS, first byte and total, each ending after the one before", async () => {
      const { evidence } = await evidenceOf(
        await run(target.url, [{ name: "slow", http: { method: "GET", path: "/slow" } }]),
      );
      const { connectionReused, dnsMs, connectMs, tlsMs, firstByteMs, totalMs } = evidence.timings;
      expect(connectionReused).to.equal(false);
      const stages = [dnsMs, connectMs, tlsMs, firstByteMs, totalMs];
      for (const stage of stages) expect(stage).to.be.a("number").and.at.least(0);
      expect([...(stages as number[])].sort((a, b) => a - b)).to.deep.equal(stages);
      expect(firstByteMs - (tlsMs as number)).to.be.at.least(55);
    });
  });
});
