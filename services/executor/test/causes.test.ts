// Why a test failed (issue 39; docs/runs.md, "Why a test failed"): every failed test carries a
// cause decided where the failure was found, from what was found, never from its words. Real
// steps against real servers and a real Chromium.
import { stepsFromFile } from "@testrun/content-file";
import { findFreePort } from "@testrun/testing";
import { expect } from "chai";
import { BrowserPool } from "../src/browser/pool.js";
import { runSteps } from "../src/steps/runner.js";
import { browserTargetEgress, chromiumPath, startBrowserTarget, stepsOf } from "./browser-target.js";
import { localEgress, startTestTarget } from "./target.js";

describe("the cause of a failed test", function () {
  this.timeout(60_000);

  describe("HTTP steps", () => {
    let target: Awaited<ReturnType<typeof startTestTarget>>;
    before(async () => {
      target = await startTestTarget();
    });
    after(() => target.close());

    const causeOf = async (
      http: Record<string, unknown>,
      options: { deadlineMs?: number; baseUrl?: string } = {},
    ) => {
      const outcome = await runSteps(stepsFromFile([{ name: "s", ...http }], "steps"), {
        baseUrl: options.baseUrl ?? target.url,
        variables: {},
        egress: localEgress,
        ...(options.deadlineMs && { deadlineMs: options.deadlineMs }),
      });
      expect(outcome.passed, outcome.summary).to.equal(false);
      return outcome.cause;
    };

    it("an expectation not met is an assertion; a passing test has no cause", async () => {
      expect(
        await causeOf({ http: { method: "GET", path: "/status/500" }, expect: { status: 200 } }),
      ).to.equal("assertion");
      expect(
        await causeOf({ http: { method: "GET", path: "/json" }, expect: { json: { "$.count": 3 } } }),
      ).to.equal("assertion");
      const passed = await runSteps(
        stepsFromFile([{ name: "s", http: { method: "GET", path: "/text" } }], "steps"),
        {
          baseUrl: target.url,
          variables: {},
          egress: localEgress,
        },
      );
      expect([passed.passed, passed.cause]).to.deep.equal([true, undefined]);
    });

    it("no answer within the step's timeout, or past the test's deadline, is a timeout", async () => {
      expect(await causeOf({ http: { method: "GET", path: "/hang", timeoutMs: 300 } })).to.equal("timeout");
      expect(await causeOf({ http: { method: "GET", path: "/slow?ms=5000" } }, { deadlineMs: 300 })).to.equal(
        "timeout",
      );
    });

    it("a refused connection or a name that does not resolve is the network; an address the guard refuses is egress_refused", async () => {
      const closed = `http://127.0.0.2:${await findFreePort()}`;
      expect(await causeOf({ http: { method: "GET", path: "/" } }, { baseUrl: closed })).to.equal("network");
      expect(
        await causeOf({ http: { method: "GET", path: "/" } }, { baseUrl: "http://nowhere.invalid" }),
      ).to.equal("network");
      expect(
        await causeOf(
          { http: { method: "GET", path: "/latest/meta-data/" } },
          { baseUrl: "http://169.254.169.254" },
        ),
      ).to.equal("egress_refused");
    });
  });

  describe("browser steps", () => {
    let target: Awaited<ReturnType<typeof startBrowserTarget>>;
    let pool: BrowserPool;
    before(async () => {
      target = await startBrowserTarget();
      pool = new BrowserPool({ executablePath: chromiumPath, contexts: 1 });
    });
    after(async () => {
      await pool?.close();
      await target?.close();
    });
    const open = (path: string) => ({ name: `open ${path}`, browser: { goto: { url: path } } });
    const causeOf = async (steps: object[], baseUrl = target.url) => {
      const outcome = await runSteps(stepsOf(steps), {
        baseUrl,
        variables: {},
        egress: browserTargetEgress,
        browsers: pool,
      });
      expect(outcome.passed, outcome.summary).to.equal(false);
      return outcome.cause;
    };
    const step = (browser: object) => ({ name: "s", browser: { timeoutMs: 500, ...browser } });

    it("no element, or several where one is needed, is the locator's", async () => {
      expect(
        await causeOf([open("/"), step({ click: { locator: { role: "button", name: "Nope" } } })]),
      ).to.equal("locator");
      expect(await causeOf([open("/"), step({ click: { locator: { css: ".item" } } })])).to.equal("locator");
      expect(
        await causeOf([open("/"), step({ expect: { locator: { text: "Nowhere at all" }, visible: true } })]),
      ).to.equal("locator");
    });

    it("an element not ready in time, or a page that does not load, is a timeout; an expectation of the page an assertion", async () => {
      expect(
        await causeOf([open("/"), step({ click: { locator: { role: "button", name: "Disabled action" } } })]),
      ).to.equal("timeout");
      expect(await causeOf([step({ goto: { url: "/hang" } })])).to.equal("timeout");
      expect(await causeOf([open("/"), step({ expect: { title: "Not this title" } })])).to.equal("assertion");
    });

    it("a page that cannot be reached is the network's", async () => {
      const closed = `http://127.0.0.2:${await findFreePort()}/`;
      expect(await causeOf([step({ goto: { url: closed } })])).to.equal("network");
    });
  });
});
