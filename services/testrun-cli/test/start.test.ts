// Starting a run without ever starting two (docs/pipelines.md, "It never starts a run twice"),
// against a scripted gateway that fails the POST in each way that matters.
import { type ApiError, MaybeStarted, NetworkError, startSafely, TestrunClient } from "@testrun/api-client";
import { expect } from "chai";
import { FakeGateway, fakeRun } from "./fake-gateway.js";

describe("starting a run safely", () => {
  let gateway: FakeGateway;
  beforeEach(async () => {
    gateway = await FakeGateway.start();
  });
  afterEach(async () => {
    await gateway.stop();
  });

  const start = (client = gateway.client()) =>
    startSafely(client, (idempotencyKey) => client.startRun({ testPlan: "Smoke" }, { idempotencyKey }), {
      outageMs: 5_000,
    });
  const posts = () => gateway.requests.filter((r) => r.method === "POST");
  const openApiWith = (header: boolean) => ({
    status: 200,
    body: {
      openapi: "3.1.0",
      // Prose naming the header is not a declaration of it.
      info: { description: "Without Idempotency-Key every request starts a run." },
      components: header ? { parameters: { IdempotencyKey: { name: "Idempotency-Key", in: "header" } } } : {},
    },
  });

  it("posts once with an Idempotency-Key and the body, and answers the run", async () => {
    gateway.answer = () => ({ status: 201, body: fakeRun() });
    const outcome = await start();
    expect(outcome).to.deep.equal({ kind: "started", run: fakeRun(), replayed: false });
    expect(posts()).to.have.length(1);
    expect(posts()[0]?.headers["idempotency-key"]).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(JSON.parse(posts()[0]?.body ?? "")).to.deep.equal({ testPlan: "Smoke" });
    expect(posts()[0]?.headers.authorization).to.equal(`Bearer trk_${"a".repeat(46)}`);
  });

  it("follows the run of a 500 that carries an id, without posting again", async () => {
    gateway.answer = () => ({
      status: 500,
      body: { error: "started but not read back", code: "internal", id: "run_9", url: "http://x/runs/run_9" },
    });
    expect(await start()).to.deep.equal({ kind: "follow", id: "run_9", url: "http://x/runs/run_9" });
    expect(gateway.requests).to.have.length(1);
  });

  it("repeats a start refused with 429 after its Retry-After", async () => {
    gateway.answer = (_, i) =>
      i === 0
        ? { status: 429, body: { error: "slow down" }, headers: { "retry-after": "1" } }
        : { status: 201, body: fakeRun() };
    const outcome = await start();
    expect(outcome.kind).to.equal("started");
    expect(posts()).to.have.length(2);
    expect((posts()[1]?.at ?? 0) - (posts()[0]?.at ?? 0)).to.be.at.least(1000);
    expect(posts()[1]?.headers["idempotency-key"]).to.equal(posts()[0]?.headers["idempotency-key"]);
  });

  it("does not repeat a start that got no answer when the gateway does not take an Idempotency-Key", async () => {
    gateway.answer = (request) =>
      request.method === "POST" ? "drop" : { status: 404, body: { error: "no" } };
    const failure = await start().catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(MaybeStarted);
    expect((failure as MaybeStarted).last).to.be.instanceOf(NetworkError);
    expect(posts()).to.have.length(1);
    expect(gateway.requests.map((r) => `${r.method} ${r.url}`)).to.deep.equal([
      "POST /v1/runs",
      "GET /v1/openapi.json",
    ]);
  });

  it("does not repeat a 502 without an id either, on such a gateway", async () => {
    gateway.answer = (request) =>
      request.method === "POST" ? { status: 502, body: { error: "bad gateway" } } : openApiWith(false);
    const failure = await start().catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(MaybeStarted);
    expect(((failure as MaybeStarted).last as ApiError).status).to.equal(502);
    expect(posts()).to.have.length(1);
  });

  it("repeats it with the same key when the gateway takes an Idempotency-Key, and says a replay is one", async () => {
    gateway.answer = (request, i) => {
      if (request.method === "GET") return openApiWith(true);
      return i === 0 ? "drop" : { status: 201, body: fakeRun(), headers: { "idempotent-replayed": "true" } };
    };
    const outcome = await start();
    expect(outcome).to.deep.equal({ kind: "started", run: fakeRun(), replayed: true });
    expect(posts()).to.have.length(2);
    expect(posts()[1]?.headers["idempotency-key"]).to.equal(posts()[0]?.headers["idempotency-key"]);
  });

  it("repeats a start whose connection was refused (it never left), until the outage budget ends", async () => {
    // The fake gateway's port, once it has stopped listening: connections are refused.
    const closed = gateway.url;
    await gateway.stop();
    const client = new TestrunClient({ baseUrl: closed, apiKey: "k" });
    const started = Date.now();
    const failure = await startSafely(
      client,
      (key) => client.startRun({ tags: ["a"] }, { idempotencyKey: key }),
      {
        outageMs: 1_500,
      },
    ).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(NetworkError);
    expect((failure as NetworkError).maybeSent).to.equal(false);
    expect(Date.now() - started).to.be.at.least(1_400);
  });

  it("never repeats a 4xx", async () => {
    gateway.answer = () => ({
      status: 402,
      body: { error: "not enough", code: "insufficient_credits", required: 2, available: 1 },
    });
    const failure = await start().catch((error: unknown) => error);
    expect((failure as ApiError).status).to.equal(402);
    expect((failure as ApiError).body).to.include({ required: 2, available: 1 });
    expect(gateway.requests).to.have.length(1);
  });
});
