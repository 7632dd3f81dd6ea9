// What a failed HTTP step got, through the whole system: a real executor runs a test against a
// target that sends a secret variable back (in the body as it is, URL-encoded and in JSON escapes,
// in headers), the REST API lists the step's http-response artifact and serves its bytes, and the
// console's test page shows the status line, the headers, the body and the timing under the step,
// at 1280 and 390 px. Neither the bytes nor the page hold the secret in any form: only {{SECRET}}.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createCliContext, createEnvironment, setVariable } from "@testrun/cli";
import { echoes, fragments, secret, secretWindows } from "@testrun/testing/redaction-encodings";
import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, shot, viewports } from "./browser.js";
import { addCases, newProject, type Pipeline, type RunBody, sharedTestSystem } from "./pipeline.js";

/** The forms the target sends the value back in: as it is, URL-encoded and in JSON escapes. */
const sentBack = {
  raw: (v: string) => v,
  "URL-encoded": encodeURIComponent,
  "JSON string": (v: string) => JSON.stringify(v).slice(1, -1),
  "JSON, non-ASCII as \\u00XX": echoes["JSON string, non-ASCII as \\uxxxx (Python json.dumps)"],
  "JSON, HTML-safe (\\u0022 for a quote)":
    echoes["JSON string, HTML-safe, \\u0022 for a quote (.NET System.Text.Json)"],
} as Record<string, (v: string) => string>;

/** Every 8 characters of any form of the secret that depend on it: none may be stored or shown. */
const leaks = [
  ...new Set([...Object.values(echoes).flatMap((encode) => secretWindows(encode)), ...fragments(secret)]),
];
const expectNoLeak = (text: string, where: string) => {
  for (const leak of leaks) expect(text, `${where}: ${leak}`).not.to.include(leak);
};

/**
 * GET /login?token=V answers 500 with V in its body (a line per form), in an allow-listed header
 * (location, URL-encoded) and in others (x-echo, set-cookie); GET /report answers 503 with a body of
 * 40,000 bytes, longer than what is kept.
 */
function startTarget(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://target");
    const value = url.searchParams.get("token") ?? "";
    if (url.pathname === "/login") {
      res.writeHead(500, {
        "content-type": "text/plain; charset=utf-8",
        location: `/login?retry=${encodeURIComponent(value)}`,
        "x-request-id": "req-7f3a",
        "x-echo": encodeURIComponent(value),
        "set-cookie": `session=${encodeURIComponent(value)}; HttpOnly`,
      });
      res.end(
        [
          "login failed for this token:",
          ...Object.entries(sentBack).map(([name, encode]) => `${name}: ${encode(value)}`),
        ].join("\n"),
      );
      return;
    }
    if (url.pathname === "/report") {
      res.writeHead(503, { "content-type": "text/plain", "retry-after": "120" });
      res.end("the report is not ready\n".padEnd(40_000, "."));
      return;
    }
    res.writeHead(200).end("ok");
  }).listen(0, "127.0.0.1");
}

const cases = JSON.stringify([
  {
    name: "Log in with the token",
    tags: ["evidence"],
    steps: [
      { name: "home", http: { method: "GET", path: "/" } },
      {
        name: "log in",
        http: { method: "GET", path: "/login", query: { token: "{{SECRET}}" } },
        expect: { status: 200 },
      },
    ],
  },
  {
    name: "Read the report",
    tags: ["evidence"],
    steps: [{ name: "report", http: { method: "GET", path: "/report" }, expect: { status: 200 } }],
  },
]);

describe("a failed HTTP step's response, over REST and on the console's test page", function () {
  this.timeout(90_000);
  let system: System;
  let target: Server;
  let browser: Browser;
  let pipeline: Pipeline;
  let ownerId: string;
  let run: RunBody;

  before(async () => {
    target = startTarget();
    await once(target, "listening");
    system = await sharedTestSystem();
    const project = await newProject(system, "http evidence", { credits: 20 });
    ({ pipeline, ownerId } = project);
    const ctx = createCliContext(system.env);
    const { port } = target.address() as AddressInfo;
    await createEnvironment(ctx, {
      projectId: project.projectId,
      name: "target",
      baseUrl: `http://127.0.0.1:${port}`,
    });
    await setVariable(ctx, { projectId: project.projectId, name: "SECRET", value: secret });
    await addCases(system, project.projectId, cases);
    run = await pipeline.finished((await pipeline.start({ tags: ["evidence"], environment: "target" })).id);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    target?.close();
  });

  const testNamed = (name: string) => {
    const test = run.tests.find((t) => t.name === name);
    if (!test) throw new Error(`no test ${name}`);
    return test;
  };
  const bytesOf = async (url: string) => {
    const answer = await fetch(url, { headers: { authorization: `Bearer ${pipeline.key}` } });
    return { status: answer.status, type: answer.headers.get("content-type"), text: await answer.text() };
  };

  it("lists the failed step's response with the test and serves it, the secret only as {{SECRET}}", async () => {
    const test = testNamed("Log in with the token");
    expect(test.summary).to.equal('step 2 "log in": expected status 200, got 500');
    expect(test.artifacts.map((a) => [a.kind, a.name, a.step, a.contentType])).to.deep.equal([
      ["http_response", "http-response", 2, "application/json"],
    ]);
    const artifact = test.artifacts[0];
    const served = await bytesOf(String(artifact?.url));
    expect(served.status).to.equal(200);
    expect(served.type).to.match(/^application\/json/);
    expect(Buffer.byteLength(served.text)).to.equal(artifact?.size);
    expectNoLeak(served.text, "the artifact's bytes");

    const kept = JSON.parse(served.text);
    expect(kept).to.include({ status: 500, statusText: "Internal Server Error" });
    expect(kept.request.url).to.match(/\/login\?token=\{\{SECRET\}\}$/);
    expect(kept.body.text.split("\n").slice(1)).to.deep.equal(
      Object.keys(sentBack).map((name) => `${name}: {{SECRET}}`),
    );
    const headers = Object.fromEntries(
      kept.headers.map((h: { name: string; value?: string }) => [h.name, h.value ?? "(named)"]),
    );
    expect(headers).to.include({
      location: "/login?retry={{SECRET}}",
      "x-request-id": "req-7f3a",
      "x-echo": "(named)",
      "set-cookie": "(named)",
    });
    const { dnsMs, connectMs, tlsMs, firstByteMs, totalMs } = kept.timings;
    expect([dnsMs, tlsMs]).to.deep.equal([null, null]);
    expect(firstByteMs).to.be.at.least(connectMs ?? 0);
    expect(totalMs).to.be.at.least(firstByteMs);
  });

  it("keeps 16 KiB of a longer body and says how much there was", async () => {
    const test = testNamed("Read the report");
    const served = await bytesOf(String(test.artifacts[0]?.url));
    const kept = JSON.parse(served.text);
    expect(kept.body).to.include({ truncated: true, complete: true, receivedBytes: 40_000 });
    expect(kept.body.text).to.have.length(16 * 1024);
  });

  /** The test's page, signed in as the project's owner, at one of the two widths. */
  const testPage = async (name: string, width: keyof typeof viewports): Promise<Page> => {
    const context = await browser.newContext({ viewport: viewports[width] });
    const page = await context.newPage();
    await openSignInLink(page, system, ownerId);
    await page.goto(testNamed(name).url);
    await page.getByRole("heading", { level: 1, name: new RegExp(name) }).waitFor();
    return page;
  };

  for (const width of ["wide", "narrow"] as const) {
    it(`shows the response under the failed step: status, headers, body and timing (${viewports[width].width} px)`, async () => {
      const page = await testPage("Log in with the token", width);
      try {
        const failed = page.locator("li.step-failed");
        const response = failed.getByRole("region", { name: "Response" });
        await response.getByText("HTTP 500").waitFor();
        await response.getByText("Internal Server Error").waitFor();
        // Only the failed step has one.
        expect(await page.getByRole("region", { name: "Response" }).count()).to.equal(1);

        const table = response.getByRole("table", { name: "Response headers" });
        const row = (header: string) => table.getByRole("row").filter({ hasText: header });
        expect(await row("location").getByRole("cell").nth(1).innerText()).to.equal(
          "/login?retry={{SECRET}}",
        );
        expect(await row("x-request-id").getByRole("cell").nth(1).innerText()).to.equal("req-7f3a");
        expect(await row("x-echo").getByRole("cell").nth(1).innerText()).to.equal("not kept");

        const body = response.locator("pre");
        expect((await body.innerText()).split("\n").slice(1)).to.deep.equal(
          Object.keys(sentBack).map((name) => `${name}: {{SECRET}}`),
        );
        const size = await response.getByRole("heading", { level: 4, name: /^Body/ }).innerText();
        expect(size).to.match(/^Body \(\d+ B\)$/i);

        const timing = response.locator(".response-timings");
        for (const stage of ["DNS lookup", "TCP connect", "TLS handshake", "First byte", "Total"])
          await timing.getByText(stage, { exact: true }).waitFor();
        expect(await timing.locator("dd").count()).to.equal(5);
        expect(await response.getByRole("link", { name: "Response as JSON" }).getAttribute("href")).to.match(
          /^\/artifacts\/art_/,
        );

        // Nothing on the page holds the secret, in the text shown or in the document.
        expectNoLeak(await page.locator("body").innerText(), "the page's text");
        expectNoLeak(await page.content(), "the page's document");
        await response.scrollIntoViewIfNeeded();
        await shot(page, "test-http-response", width);
      } finally {
        await page.context().close();
      }
    });
  }

  it("says a long body was cut: the first 16 KiB of how much there was", async () => {
    const page = await testPage("Read the report", "wide");
    try {
      const response = page.getByRole("region", { name: "Response" });
      await response.getByText("HTTP 503").waitFor();
      await response.getByRole("heading", { level: 4, name: "Body (first 16 KiB of 39.1 KiB)" }).waitFor();
      const table = response.getByRole("table", { name: "Response headers" });
      expect(
        await table.getByRole("row").filter({ hasText: "retry-after" }).getByRole("cell").nth(1).innerText(),
      ).to.equal("120");
      await shot(page, "test-http-response-cut", "wide");
    } finally {
      await page.context().close();
    }
  });
});
