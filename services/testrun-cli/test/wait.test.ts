// How `testrun` reads a run while waiting (docs/pipelines.md, "How it waits"), against a scripted
// gateway: long-poll when the gateway has it, the 15 s rule (shrunk here) when it refuses or ignores
// `wait`, Retry-After on 429, retries through 5xx and dropped connections, and the deadline.
import { ApiError } from "@testrun/api-client";
import { expect } from "chai";
import { waitForRun } from "../src/wait.js";
import { FakeGateway, fakeRun } from "./fake-gateway.js";

describe("waiting for a run", () => {
  let gateway: FakeGateway;
  beforeEach(async () => {
    gateway = await FakeGateway.start();
  });
  afterEach(async () => {
    await gateway.stop();
  });

  /** Time between the starts of consecutive reads, as the client sent them. */
  const gaps = () => gateway.sentAt.slice(1).map((at, i) => at - (gateway.sentAt[i] ?? 0));

  it("long-polls with ?wait= and follows each answer at once", async () => {
    gateway.answer = (_, i) => ({ status: 200, body: fakeRun(i < 2 ? "RUNNING" : "PASSED"), delayMs: 300 });
    const result = await waitForRun(gateway.client(), fakeRun(), {
      deadline: Date.now() + 60_000,
      pollIntervalMs: 1_000,
    });
    expect(result.timedOut).to.equal(false);
    expect(result.run.status).to.equal("PASSED");
    expect(gateway.requests.map((r) => r.url)).to.deep.equal([
      "/v1/runs/run_1?wait=30",
      "/v1/runs/run_1?wait=30",
      "/v1/runs/run_1?wait=30",
    ]);
    // No pause between the long-polls: a client that waited the interval after each answer would
    // show gaps of 1300 ms or more (300 held + 1000); below 1200 leaves a busy machine 900 ms.
    for (const gap of gaps()) expect(gap).to.be.below(1_200);
  });

  it("asks for no longer a wait than the time left", async () => {
    gateway.answer = () => ({ status: 200, body: fakeRun("PASSED") });
    await waitForRun(gateway.client(), fakeRun(), { deadline: Date.now() + 4_500 });
    expect(gateway.requests[0]?.url).to.equal("/v1/runs/run_1?wait=5");
  });

  it("falls back to plain reads at the polling interval when the gateway refuses wait", async () => {
    gateway.answer = (request, i) =>
      request.url.includes("wait=")
        ? {
            status: 400,
            body: {
              error: 'unknown query parameter "wait"; this endpoint takes none',
              code: "invalid_request",
            },
          }
        : { status: 200, body: fakeRun(i < 3 ? "RUNNING" : "FAILED") };
    const client = gateway.client();
    const result = await waitForRun(client, fakeRun(), {
      deadline: Date.now() + 60_000,
      pollIntervalMs: 300,
    });
    expect(result.run.status).to.equal("FAILED");
    expect(gateway.requests.map((r) => r.url)).to.deep.equal([
      "/v1/runs/run_1?wait=30",
      "/v1/runs/run_1",
      "/v1/runs/run_1",
      "/v1/runs/run_1",
    ]);
    const [, ...polls] = gaps();
    for (const gap of polls) expect(gap).to.be.at.least(290);
    // The same client does not ask again.
    await waitForRun(client, fakeRun(), { deadline: Date.now() + 60_000, pollIntervalMs: 300 });
    expect(gateway.requests.at(-1)?.url).to.equal("/v1/runs/run_1");
  });

  it("keeps to the polling interval when the gateway ignores wait and answers at once", async () => {
    gateway.answer = (_, i) => ({ status: 200, body: fakeRun(i < 3 ? "RUNNING" : "PASSED") });
    await waitForRun(gateway.client(), fakeRun(), { deadline: Date.now() + 60_000, pollIntervalMs: 300 });
    expect(gateway.requests).to.have.length(4);
    for (const gap of gaps()) expect(gap).to.be.at.least(290);
  });

  it("waits out a 429 for its Retry-After, and retries a 503 and a dropped connection", async () => {
    const retries: string[] = [];
    gateway.answer = (_, i) =>
      [
        {
          status: 429,
          body: { error: "rate limited", code: "rate_limited" },
          headers: { "retry-after": "1" },
        },
        { status: 503, body: { error: "unavailable" } },
        "drop" as const,
        { status: 200, body: fakeRun("PASSED") },
      ][i] ?? { status: 500 };
    const result = await waitForRun(gateway.client(), fakeRun(), {
      deadline: Date.now() + 60_000,
      onRetry: (reason) => retries.push(reason),
    });
    expect(result.run.status).to.equal("PASSED");
    expect(gaps()[0]).to.be.at.least(1000);
    expect(retries[0]).to.equal("HTTP 429 rate_limited: rate limited");
    expect(retries[1]).to.equal("HTTP 503: unavailable");
    expect(retries[2]).to.match(/^no answer: /);
  });

  it("gives up on a 404 at once", async () => {
    gateway.answer = () => ({ status: 404, body: { error: "no such run", code: "not_found" } });
    const failure = await waitForRun(gateway.client(), fakeRun(), { deadline: Date.now() + 60_000 }).catch(
      (error: unknown) => error,
    );
    expect(failure).to.be.instanceOf(ApiError);
    expect((failure as ApiError).status).to.equal(404);
    expect(gateway.requests).to.have.length(1);
  });

  it("ends at the deadline with the last run read, also while a 429 is being waited out", async () => {
    gateway.answer = () => ({ status: 200, body: fakeRun("RUNNING"), delayMs: 100 });
    const started = Date.now();
    const result = await waitForRun(gateway.client(), fakeRun(), {
      deadline: started + 700,
      pollIntervalMs: 10_000,
    });
    expect(result.timedOut).to.equal(true);
    expect(Date.now() - started).to.be.within(650, 1500);

    gateway.answer = () => ({ status: 429, body: { error: "slow down" }, headers: { "retry-after": "30" } });
    const limited = Date.now();
    const again = await waitForRun(gateway.client(), fakeRun(), { deadline: limited + 500 });
    expect(again.timedOut).to.equal(true);
    expect(Date.now() - limited).to.be.within(450, 1500);
  });

  it("stops when its signal aborts", async () => {
    const stop = new AbortController();
    // The signal comes while the long-poll is in flight.
    gateway.answer = () => {
      stop.abort("SIGTERM");
      return { status: 200, body: fakeRun("RUNNING"), delayMs: 5_000 };
    };
    const failure = await waitForRun(gateway.client(), fakeRun(), {
      deadline: Date.now() + 60_000,
      signal: stop.signal,
    }).catch((error: unknown) => error);
    expect(failure).to.equal("SIGTERM");
  });
});
