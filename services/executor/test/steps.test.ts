import { stepsFromFile } from "@testrun/content-file";
import { findFreePort } from "@testrun/testing";
import { expect } from "chai";
import { runSteps } from "../src/steps/runner.js";
import { localEgress, startTestTarget, type TestTarget } from "./target.js";

describe("step runner (HTTP steps against a real server)", () => {
  let target: TestTarget;
  before(async () => {
    target = await startTestTarget();
  });
  after(() => target.close());
  beforeEach(() => {
    target.hits.length = 0;
  });

  const variables = { USER: "alice", PASSWORD: "s3cret" };
  /** Runs steps written in the file format of docs/runs.md. */
  const run = (steps: unknown[], options: { baseUrl?: string; vars?: Record<string, string> } = {}) =>
    runSteps(stepsFromFile(steps, "steps"), {
      baseUrl: options.baseUrl ?? target.url,
      variables: options.vars ?? variables,
      egress: localEgress,
    });
  /** The summary of a one-step test named "s" that must fail. */
  const failure = async (step: Record<string, unknown>, vars?: Record<string, string>) => {
    const outcome = await run([{ name: "s", ...step }], { vars });
    expect(outcome.passed, outcome.summary).to.equal(false);
    return outcome.summary;
  };
  const passes = async (step: Record<string, unknown>) => {
    const outcome = await run([{ name: "s", ...step }]);
    expect(outcome.passed, outcome.summary).to.equal(true);
  };

  it("passes a login whose token, saved from the body, authorizes the next step", async () => {
    const outcome = await run([
      {
        name: "log in",
        http: { method: "POST", path: "/login", json: { user: "{{USER}}", password: "{{PASSWORD}}" } },
        expect: { status: 200, json: { "$.ok": true } },
        save: { token: "$.token" },
      },
      {
        name: "read me",
        http: { method: "GET", path: "/me", headers: { authorization: "Bearer {{token}}" } },
        expect: { status: 200, json: { "$.name": "{{USER}}" } },
      },
    ]);
    expect(outcome).to.include({ passed: true, summary: "2 steps passed", failedStep: 0 });
    expect(outcome.durationMs).to.be.a("number").and.at.least(0);
    expect(target.hits).to.deep.equal(["POST /login", "GET /me"]);
  });

  it("stops at the first failing step and names it, 1-based", async () => {
    const outcome = await run([
      { name: "fine", http: { method: "GET", path: "/text" } },
      {
        name: "log in",
        http: { method: "POST", path: "/login", json: { user: "{{USER}}", password: "wrong" } },
        expect: { status: 200 },
      },
      { name: "never", http: { method: "GET", path: "/json" } },
    ]);
    expect(outcome).to.include({
      passed: false,
      summary: 'step 2 "log in": expected status 200, got 401',
      failedStep: 2,
    });
    expect(target.hits).to.deep.equal(["GET /text", "POST /login"]);
  });

  describe("status", () => {
    it("accepts any 2xx when no status is given, and fails anything else", async () => {
      await passes({ http: { method: "GET", path: "/status/204" } });
      expect(await failure({ http: { method: "GET", path: "/status/404" } })).to.equal(
        'step 1 "s": expected a 2xx status, got 404',
      );
    });

    it("accepts any status of a list", async () => {
      await passes({ http: { method: "GET", path: "/status/201" }, expect: { status: [200, 201] } });
      expect(
        await failure({ http: { method: "GET", path: "/status/500" }, expect: { status: [200, 201, 204] } }),
      ).to.equal('step 1 "s": expected status 200, 201 or 204, got 500');
      expect(
        await failure({ http: { method: "GET", path: "/status/500" }, expect: { status: [200, 201] } }),
      ).to.equal('step 1 "s": expected status 200 or 201, got 500');
    });

    it("does not follow redirects: the step sees the 302", async () => {
      await passes({ http: { method: "GET", path: "/redirect" }, expect: { status: 302 } });
    });
  });

  describe("headers", () => {
    it("match the name and the contained text ignoring case", async () => {
      await passes({
        http: { method: "GET", path: "/json" },
        expect: { headers: { "Content-Type": "APPLICATION/JSON" } },
      });
    });

    it("fail with what the header held, or none", async () => {
      expect(
        await failure({
          http: { method: "GET", path: "/text" },
          expect: { headers: { "content-type": "application/json" } },
        }),
      ).to.equal('step 1 "s": expected header content-type to contain "application/json", got "text/plain"');
      expect(
        await failure({ http: { method: "GET", path: "/text" }, expect: { headers: { "X-Missing": "a" } } }),
      ).to.equal('step 1 "s": expected header x-missing to contain "a", got none');
    });
  });

  describe("body texts", () => {
    it("bodyContains: every text must be in the body, case-sensitive", async () => {
      await passes({
        http: { method: "GET", path: "/text" },
        expect: { bodyContains: ["hello", "welcome"] },
      });
      expect(
        await failure({
          http: { method: "GET", path: "/text" },
          expect: { bodyContains: ["hello", "Welcome"] },
        }),
      ).to.equal('step 1 "s": expected the body to contain "Welcome"');
    });

    it("bodyNotContains: no text may be in the body", async () => {
      await passes({ http: { method: "GET", path: "/text" }, expect: { bodyNotContains: ["error"] } });
      expect(
        await failure({ http: { method: "GET", path: "/text" }, expect: { bodyNotContains: ["welcome"] } }),
      ).to.equal('step 1 "s": expected the body not to contain "welcome"');
    });
  });

  describe("JSON paths", () => {
    it("compare deeply, numbers numerically, through names, quoted names and indexes", async () => {
      await passes({
        http: { method: "GET", path: "/json" },
        expect: {
          json: {
            "$.ok": true,
            "$.count": 2.0,
            "$.items[0].id": 7,
            "$.items[0]": { tags: ["a"], id: 7 },
            "$['odd key']": "x",
            '$["user"]': null,
          },
        },
      });
    });

    it("fail with the value found, no match, or a body that is not JSON", async () => {
      const get = (json: Record<string, unknown>, path = "/json") =>
        failure({ http: { method: "GET", path }, expect: { json } });
      expect(await get({ "$.count": 3 })).to.equal('step 1 "s": expected $.count = 3, got 2');
      expect(await get({ "$.items[0]": { id: 7 } })).to.equal(
        'step 1 "s": expected $.items[0] = {"id":7}, got {"id":7,"tags":["a"]}',
      );
      expect(await get({ "$.items[1].id": 7 })).to.equal(
        'step 1 "s": expected $.items[1].id = 7, got no match',
      );
      expect(await get({ "$.ok": "true" })).to.equal('step 1 "s": expected $.ok = "true", got true');
      expect(await get({ "$.ok": true }, "/text")).to.equal(
        'step 1 "s": expected $.ok = true, but the body is not JSON',
      );
    });
  });

  describe("maxDurationMs and timeouts", () => {
    it("fails a response slower than maxDurationMs, saying how long it took", async () => {
      await passes({
        http: { method: "GET", path: "/slow", query: { ms: "0" } },
        expect: { maxDurationMs: 5000 },
      });
      const summary = await failure({
        http: { method: "GET", path: "/slow", query: { ms: "120" } },
        expect: { maxDurationMs: 50 },
      });
      expect(summary).to.match(/^step 1 "s": expected a response within 50 ms, took (\d+) ms$/);
      expect(Number(/took (\d+)/.exec(summary)?.[1])).to.be.at.least(120);
    });

    it("fails a request with no complete response within timeoutMs", async () => {
      expect(await failure({ http: { method: "GET", path: "/hang", timeoutMs: 200 } })).to.equal(
        'step 1 "s": no response within 200 ms',
      );
    });

    it("fails when nothing listens at the base URL, saying only that it could not connect", async () => {
      const port = await findFreePort();
      const outcome = await run([{ name: "s", http: { method: "GET", path: "/" } }], {
        baseUrl: `http://127.0.0.1:${port}`,
      });
      // The same words as for an unknown host or a refused address (egress.test.ts).
      expect(outcome.summary).to.equal('step 1 "s": request failed: could not connect to the host');
    });
  });

  describe("interpolation", () => {
    it("fills path, query, header values, JSON strings and raw bodies; names stay as written", async () => {
      const outcome = await run([
        {
          name: "echo",
          http: {
            method: "POST",
            path: "/echo?{{USER}}=1",
            query: { who: "{{USER}}", "{{USER}}": "x" },
            headers: { "x-who": "{{USER}}" },
            json: { list: ["{{USER}}", 1, { "{{USER}}": "{{USER}}" }] },
          },
          expect: {
            json: {
              "$.query": { alice: "1", who: "alice", "{{USER}}": "x" },
              "$.headers['x-who']": "alice",
              "$.headers['content-type']": "application/json",
              "$.json": { list: ["alice", 1, { "{{USER}}": "alice" }] },
            },
          },
        },
        {
          name: "raw",
          http: {
            method: "PUT",
            path: "/echo",
            raw: "user={{USER}}",
            headers: { "content-type": "text/x-form" },
          },
          expect: {
            bodyContains: ["user={{USER}}"],
            headers: { "content-type": "json" },
            json: { "$.headers['content-type']": "text/x-form", "$.method": "PUT" },
          },
        },
      ]);
      expect(outcome.summary).to.equal("2 steps passed");
    });

    it("prefers a value saved by an earlier step to a project variable of the same name", async () => {
      const outcome = await run([
        { name: "save", http: { method: "GET", path: "/json" }, save: { USER: "$.items[0].id" } },
        {
          name: "use",
          http: { method: "GET", path: "/echo", query: { v: "{{USER}}" } },
          expect: { json: { "$.query.v": "7" } },
        },
      ]);
      expect(outcome).to.include({ passed: true });
    });

    it("fails a step using an unknown name, before sending anything", async () => {
      expect(await failure({ http: { method: "GET", path: "/echo?x={{NOPE}}" } })).to.equal(
        'step 1 "s": unknown variable {{NOPE}}',
      );
      expect(target.hits).to.deep.equal([]);
    });
  });

  describe("save", () => {
    it("keeps strings as they are and other values as JSON text", async () => {
      const outcome = await run([
        {
          name: "save",
          http: { method: "GET", path: "/json" },
          save: { items: "$.items", ok: "$.ok", odd: "$['odd key']" },
        },
        {
          name: "use",
          http: { method: "GET", path: "/echo", query: { items: "{{items}}", ok: "{{ok}}", odd: "{{odd}}" } },
          expect: { json: { "$.query": { items: '[{"id":7,"tags":["a"]}]', ok: "true", odd: "x" } } },
        },
      ]);
      expect(outcome).to.include({ passed: true });
    });

    it("fails when the body is not JSON or the path matches nothing", async () => {
      expect(await failure({ http: { method: "GET", path: "/text" }, save: { t: "$.token" } })).to.equal(
        'step 1 "s": cannot save t: the body is not JSON',
      );
      expect(await failure({ http: { method: "GET", path: "/json" }, save: { t: "$.token" } })).to.equal(
        'step 1 "s": cannot save t: $.token matched nothing',
      );
    });

    it("happens only after the expectations passed", async () => {
      expect(
        await failure({
          http: { method: "GET", path: "/json" },
          expect: { status: 201 },
          save: { t: "$.nothing" },
        }),
      ).to.equal('step 1 "s": expected status 201, got 200');
    });
  });

  describe("summaries never carry a variable value", () => {
    it("shows expectations as written, with {{NAME}}", async () => {
      expect(
        await failure({ http: { method: "GET", path: "/text" }, expect: { bodyContains: ["{{PASSWORD}}"] } }),
      ).to.equal('step 1 "s": expected the body to contain "{{PASSWORD}}"');
    });

    it("replaces a value the target sent back by {{NAME}}", async () => {
      expect(
        await failure({
          http: { method: "GET", path: "/header", query: { value: "pw is {{PASSWORD}}" } },
          expect: { headers: { "x-echo": "nope" } },
        }),
      ).to.equal('step 1 "s": expected header x-echo to contain "nope", got "pw is {{PASSWORD}}"');
    });

    it("replaces a value that came back inside saved JSON, JSON-escaped", async () => {
      const vars = { QUOTED: 'a "quoted" secret\\' };
      const outcome = await run(
        [
          {
            name: "send",
            http: { method: "POST", path: "/echo", json: { p: "{{QUOTED}}" } },
            save: { sent: "$.body" },
          },
          { name: "show", http: { method: "GET", path: "/json" }, expect: { json: { "$.ok": "{{sent}}" } } },
        ],
        { vars },
      );
      expect(outcome.summary).to.equal('step 2 "show": expected $.ok = "{{sent}}", got true');
      const echoed = await failure(
        {
          http: { method: "POST", path: "/echo", json: { p: "{{QUOTED}}" } },
          expect: { json: { "$.body": "x" } },
        },
        vars,
      );
      expect(echoed).to.not.include("quoted");
      expect(echoed).to.include("{{QUOTED}}");
    });

    it("redacts a long value before clipping, so no prefix of it is left", async () => {
      const long = `secret-${"x".repeat(120)}`;
      const summary = await failure(
        {
          http: { method: "GET", path: "/header", query: { value: "{{LONG}}" } },
          expect: { headers: { "x-echo": "nope" } },
        },
        { LONG: long },
      );
      expect(summary).to.equal('step 1 "s": expected header x-echo to contain "nope", got "{{LONG}}"');
    });

    it("replaces a saved value that came from a variable by the variable's name", async () => {
      const outcome = await run([
        {
          name: "save",
          http: { method: "GET", path: "/echo", query: { v: "{{PASSWORD}}" } },
          save: { echoed: "$.query.v" },
        },
        {
          name: "show",
          http: { method: "GET", path: "/header", query: { value: "{{echoed}}" } },
          expect: { headers: { "x-echo": "{{USER}}" } },
        },
      ]);
      expect(outcome.summary).to.equal(
        'step 2 "show": expected header x-echo to contain "{{USER}}", got "{{PASSWORD}}"',
      );
    });

    it("replaces a value an earlier step saved (a session token) by its name, unless it is very short", async () => {
      const outcome = await run([
        {
          name: "log in",
          http: { method: "POST", path: "/login", json: { user: "{{USER}}", password: "{{PASSWORD}}" } },
          save: { token: "$.token", ok: "$.ok" },
        },
        {
          name: "show",
          http: { method: "GET", path: "/header", query: { value: "token {{token}}, ok {{ok}}" } },
          expect: { headers: { "x-echo": "nope" } },
        },
      ]);
      // "tok-1" is the token; "true" (4 characters) is redacted too, shorter values are not.
      expect(outcome.summary).to.equal(
        'step 2 "show": expected header x-echo to contain "nope", got "token {{token}}, ok {{ok}}"',
      );
      const short = await run([
        {
          name: "save",
          http: { method: "GET", path: "/echo", query: { v: "abc" } },
          save: { v: "$.query.v" },
        },
        {
          name: "show",
          http: { method: "GET", path: "/header", query: { value: "{{v}}" } },
          expect: { headers: { "x-echo": "nope" } },
        },
      ]);
      expect(short.summary).to.equal('step 2 "show": expected header x-echo to contain "nope", got "abc"');
    });
  });

  describe("a short value leaves summaries readable", () => {
    it("replaces a one-letter value where it stands alone, never inside the summary's words", async () => {
      const vars = { V: "s" };
      const passed = await run(
        [
          { name: "sign in", http: { method: "GET", path: "/text" } },
          { name: "status", http: { method: "GET", path: "/text" } },
        ],
        { vars },
      );
      expect(passed.summary).to.equal("2 steps passed");
      expect((await run([{ name: "s", http: { method: "GET", path: "/text" } }], { vars })).summary).to.equal(
        "1 step passed",
      );
      expect(
        await failure(
          {
            http: { method: "GET", path: "/header", query: { value: "s is sent as s, its steps pass" } },
            expect: { headers: { "x-echo": "nope" } },
          },
          vars,
        ),
      ).to.equal(
        'step 1 "{{V}}": expected header x-echo to contain "nope", got "{{V}} is sent as {{V}}, its steps pass"',
      );
    });

    it("never rewrites the executor's own words, even when values spell them", async () => {
      const vars = { A: "step", B: "1", C: "expected", D: "a", E: "2xx", F: "status", G: "got", H: "passed" };
      expect((await run([{ name: "x", http: { method: "GET", path: "/text" } }], { vars })).summary).to.equal(
        "1 step passed",
      );
      expect(await failure({ http: { method: "GET", path: "/status/500" } }, vars)).to.equal(
        'step 1 "s": expected a 2xx status, got 500',
      );
    });

    it("replaces a value of 4 characters or more inside words, as before", async () => {
      expect(
        await failure(
          {
            http: { method: "GET", path: "/header", query: { value: "user_hunter2x and abc_def" } },
            expect: { headers: { "x-echo": "nope" } },
          },
          { PW: "hunter2", SHORT: "abc" },
        ),
      ).to.equal('step 1 "s": expected header x-echo to contain "nope", got "user_{{PW}}x and abc_def"');
    });
  });

  it("keeps a summary on one line of at most 300 characters", async () => {
    const name = `a\nvery ${"long ".repeat(100)}name`;
    const outcome = await run([{ name, http: { method: "GET", path: "/status/500" } }]);
    expect(outcome.summary).to.have.length(300);
    expect(outcome.summary).to.match(/^step 1 "a\\nvery long long /);
    expect(outcome.summary).to.not.match(/[\r\n]/);
    expect(outcome.summary.endsWith("…")).to.equal(true);
  });

  it("stops a running step when its signal is aborted", async () => {
    const controller = new AbortController();
    const running = runSteps(
      stepsFromFile([{ name: "s", http: { method: "GET", path: "/hang" } }], "steps"),
      {
        baseUrl: target.url,
        variables,
        signal: controller.signal,
        egress: localEgress,
      },
    );
    const reason = new Error("lease lost");
    controller.abort(reason);
    const outcome = await running.then(
      () => "resolved",
      (error: unknown) => error,
    );
    expect(outcome).to.equal(reason);
  });
});
