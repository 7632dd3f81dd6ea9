// A test that fails once then passes, through the whole system: a target answering 500 to its
// first request and 200 after, a run started over REST with retries 1, a real executor. The test
// ends PASSED and flaky with two attempts in REST, `testrun` prints it "PASSED on retry (flaky)"
// and exits 0 with a warning (1 with --fail-on-flaky) and writes its JUnit flakyFailure, and the
// console shows it apart on the run's page and its attempts side by side on its own page, at 1280
// and 390 px; an agent's get_run (/v1/mcp) carries the attempts. A test failing every attempt ends
// FAILED with its cause and both attempts.
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createCliContext, createEnvironment } from "@testrun/cli";
import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, shot, viewports } from "./browser.js";
import { addCases, newProject, type Pipeline, type RunBody, sharedTestSystem } from "./pipeline.js";
import { cliEnv, runCli } from "./testrun-cli.js";

/** An attempt as REST shows it (docs/rest-api.md, "Resources"). */
interface AttemptBody {
  number: number;
  status: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  summary: string;
  failedStep: number | null;
  cause: string | null;
  executor: string | null;
  artifacts: { kind: string; url: string }[];
}
type RetriedTest = RunBody["tests"][number] & {
  flaky: boolean;
  cause: string | null;
  retries: number;
  attempts: AttemptBody[];
};

/**
 * GET /checkout answers 500 to its first request, 200 to every later one; GET /search always
 * 500; anything else 200 (the environment's check).
 */
function startTarget(): Server {
  let checkouts = 0;
  return createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://target").pathname;
    if (path === "/checkout") {
      checkouts += 1;
      res.writeHead(checkouts === 1 ? 500 : 200, { "content-type": "text/plain" });
      res.end(checkouts === 1 ? "the cart service blipped" : "ok");
      return;
    }
    if (path === "/search") {
      res.writeHead(500, { "content-type": "text/plain" }).end("the index is down");
      return;
    }
    res.writeHead(200).end("ok");
  }).listen(0, "127.0.0.1");
}

const cases = JSON.stringify([
  {
    name: "Checkout answers",
    tags: ["checkout"],
    steps: [{ name: "open", http: { method: "GET", path: "/checkout" }, expect: { status: 200 } }],
  },
  {
    name: "Search answers",
    tags: ["search"],
    steps: [{ name: "search", http: { method: "GET", path: "/search" }, expect: { status: 200 } }],
  },
]);

describe("a test that passed on retry, through REST, testrun and the console", function () {
  this.timeout(120_000);
  let system: System;
  let target: Server;
  let browser: Browser;
  let pipeline: Pipeline;
  let ownerId: string;
  let flakyRun: RunBody;
  let failedRun: RunBody;
  let dir: string;

  before(async () => {
    target = startTarget();
    await once(target, "listening");
    system = await sharedTestSystem();
    const project = await newProject(system, "attempts", { credits: 20 });
    ({ pipeline, ownerId } = project);
    const { port } = target.address() as AddressInfo;
    await createEnvironment(createCliContext(system.env), {
      projectId: project.projectId,
      name: "target",
      baseUrl: `http://127.0.0.1:${port}`,
    });
    await addCases(system, project.projectId, cases);
    const start = (tag: string) => pipeline.start({ tags: [tag], environment: "target", retries: 1 });
    flakyRun = await pipeline.finished((await start("checkout")).id);
    failedRun = await pipeline.finished((await start("search")).id);
    browser = await launchBrowser();
    dir = await mkdtemp(join(tmpdir(), "testrun-attempts-"));
  });
  after(async () => {
    await browser?.close();
    target?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const only = (run: RunBody) => {
    expect(run.tests).to.have.length(1);
    return run.tests[0] as RetriedTest;
  };

  it("ends PASSED and flaky with two attempts over REST: the first FAILED (assertion) with its response, the second PASSED", async () => {
    expect(flakyRun).to.include({ status: "PASSED", passedTests: 1, failedTests: 0, flakyTests: 1 });
    const test = only(flakyRun);
    expect(test).to.include({ status: "PASSED", flaky: true, cause: null, retries: 1 });
    const [first, second] = test.attempts;
    expect(test.attempts).to.have.length(2);
    expect(first).to.include({
      number: 1,
      status: "FAILED",
      cause: "assertion",
      failedStep: 1,
      summary: 'step 1 "open": expected status 200, got 500',
    });
    expect(second).to.include({ number: 2, status: "PASSED", cause: null, failedStep: null });
    for (const attempt of test.attempts) {
      expect(attempt.executor).to.be.a("string").and.not.equal("");
      expect(Date.parse(String(attempt.finishedAt))).to.be.at.least(Date.parse(String(attempt.startedAt)));
    }
    // The failed attempt keeps what the server answered; the test's own artifacts are the last attempt's.
    expect(first?.artifacts.map((a) => a.kind)).to.deep.equal(["http_response"]);
    expect(test.artifacts).to.deep.equal(second?.artifacts);
    const response = await fetch(String(first?.artifacts[0]?.url), {
      headers: { authorization: `Bearer ${pipeline.key}` },
    });
    expect(response.status).to.equal(200);
    expect(JSON.parse(await response.text())).to.include({ status: 500 });
  });

  it("ends FAILED after its retry with the last attempt's cause, both attempts FAILED, not flaky", () => {
    expect(failedRun).to.include({ status: "FAILED", failedTests: 1, flakyTests: 0 });
    const test = only(failedRun);
    expect(test).to.include({ status: "FAILED", flaky: false, cause: "assertion", retries: 1 });
    expect(test.attempts.map((a) => [a.number, a.status, a.cause])).to.deep.equal([
      [1, "FAILED", "assertion"],
      [2, "FAILED", "assertion"],
    ]);
  });

  it("testrun prints PASSED on retry (flaky), exits 0 with a warning, 1 with --fail-on-flaky, and writes a flakyFailure", async () => {
    const env = cliEnv(system.gatewayUrl, pipeline.key);
    const junit = join(dir, "flaky.xml");
    const waited = await runCli(["wait", flakyRun.id, "--junit", junit], env);
    expect(waited.code, waited.stdout + waited.stderr).to.equal(0);
    expect(waited.stdout).to.match(/^ {2}PASSED on retry \(flaky\) Checkout answers \(\d+ms\)/m);
    expect(waited.stdout).to.contain(
      '    attempt 1 FAILED, assertion: step 1 "open": expected status 200, got 500\n',
    );
    expect(waited.stdout).to.match(/^PASSED: 1 passed \(1 flaky\), 0 failed of 1/m);
    expect(waited.stdout).to.contain('Warning: 1 test passed only on retry (flaky): "Checkout answers"');
    const xml = await readFile(junit, "utf8");
    expect(xml).to.contain(
      '<flakyFailure message="step 1 &quot;open&quot;: expected status 200, got 500" type="assertion">',
    );
    expect(xml).to.not.contain("<failure");

    const strict = await runCli(["wait", flakyRun.id, "--fail-on-flaky"], env);
    expect(strict.code, strict.stdout + strict.stderr).to.equal(1);

    const failed = await runCli(["wait", failedRun.id, "--junit", join(dir, "failed.xml")], env);
    expect(failed.code).to.equal(1);
    expect(await readFile(join(dir, "failed.xml"), "utf8")).to.match(
      /<failure [^>]*type="FAILED">[\s\S]*<rerunFailure message="step 1 &quot;search&quot;: expected status 200, got 500" type="assertion">/,
    );
  });

  it("gives an agent the flaky test with its attempts and causes through get_run of /v1/mcp", async () => {
    const client = new Client({ name: "attempts-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/v1/mcp", system.gatewayUrl), {
        requestInit: { headers: { authorization: `Bearer ${pipeline.key}` } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: "get_run",
        arguments: { runId: flakyRun.id },
      })) as CallToolResult;
      expect(result.isError ?? false).to.equal(false);
      const [content] = result.content;
      const run = JSON.parse(content?.type === "text" ? content.text : "{}");
      expect(run.flakyTests).to.equal(1);
      expect(run.tests[0]).to.include({ status: "PASSED", flaky: true, cause: null });
      expect(run.tests[0].attempts.map((a: AttemptBody) => [a.number, a.status, a.cause])).to.deep.equal([
        [1, "FAILED", "assertion"],
        [2, "PASSED", null],
      ]);
    } finally {
      await client.close();
    }
  });

  /** A page of the console, signed in as the project's owner, at one of the two widths. */
  const open = async (url: string, width: keyof typeof viewports, heading: RegExp): Promise<Page> => {
    const context = await browser.newContext({ viewport: viewports[width] });
    const page = await context.newPage();
    await openSignInLink(page, system, ownerId);
    await page.goto(url);
    await page.getByRole("heading", { level: 1, name: heading }).waitFor();
    return page;
  };

  for (const width of ["wide", "narrow"] as const) {
    it(`shows the flaky test apart on the run's page and its attempts side by side on its own (${viewports[width].width} px)`, async () => {
      const runPage = await open(flakyRun.url, width, /Passed/);
      try {
        const flaky = runPage.getByRole("region", { name: "Flaky: passed on retry (1)" });
        await flaky.getByRole("link", { name: "Checkout answers" }).waitFor();
        expect(await flaky.getByRole("listitem").innerText()).to.match(
          /attempt 1 failed \(assertion\), then attempt 2 passed$/,
        );
        await runPage.getByText("Passed on retry", { exact: true }).waitFor();
        await runPage.getByText("flaky (passed on retry)").waitFor();
        await shot(runPage, "run-flaky", width);
        // The runs list says it too.
        await runPage.getByRole("link", { name: "Runs", exact: true }).first().click();
        await runPage.getByText("1/1 passed, 1 on retry (flaky)").first().waitFor();
      } finally {
        await runPage.context().close();
      }

      const testPage = await open(only(flakyRun).url, width, /Checkout answers/);
      try {
        await testPage
          .getByText(/^Passed on retry \(flaky\): an earlier attempt failed \(assertion\)/)
          .waitFor();
        const attempts = testPage.getByRole("region", { name: "Attempts" });
        const rows = attempts.getByRole("row");
        expect(await rows.count()).to.equal(3);
        const cells = async (row: number) =>
          (await rows.nth(row).getByRole("cell").allInnerTexts()).map((text) => text.trim());
        const [first, second] = [await cells(1), await cells(2)];
        expect(first.slice(0, 4)).to.deep.equal([
          "#1",
          "Failed",
          "assertion: an expectation not met",
          "1 of 1",
        ]);
        expect(first.at(-1)).to.match(/^response http-response$/);
        expect(second[0]).to.equal("#2");
        expect(second[1]).to.match(/^Passed/);
        expect(second[2]).to.match(/^—/);
        // What changed from attempt 1 is marked (and said to a screen reader).
        expect(await rows.nth(2).locator("mark.attempt-changed").count()).to.be.at.least(3);
        expect(
          await attempts.getByRole("link", { name: "response http-response" }).getAttribute("href"),
        ).to.match(/^\/artifacts\/art_/);
        await attempts.scrollIntoViewIfNeeded();
        await shot(testPage, "test-attempts", width);
      } finally {
        await testPage.context().close();
      }
    });
  }

  it("shows a test that failed after its retry with both attempts and its cause, not as flaky", async () => {
    const page = await open(only(failedRun).url, "wide", /Search answers/);
    try {
      const rows = page.getByRole("region", { name: "Attempts" }).getByRole("row");
      expect(await rows.count()).to.equal(3);
      expect(await page.getByText(/Passed on retry/).count()).to.equal(0);
      await shot(page, "test-attempts-failed", "wide");
    } finally {
      await page.context().close();
    }
  });
});
