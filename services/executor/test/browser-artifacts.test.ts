// What a browser test leaves behind: screenshots (PNG), a Playwright trace (kept on failure or
// when asked) with every variable's value replaced by {{NAME}}, and the page's log.
import { createHash } from "node:crypto";
import { secret } from "@testrun/testing/redaction-encodings";
import { expect } from "chai";
import { strFromU8, strToU8, unzipSync, zipSync } from "fflate";
import { type Artifact, ArtifactKind, maxScreenshotBytes } from "../src/browser/artifacts.js";
import { BrowserPool } from "../src/browser/pool.js";
import { TestBrowser } from "../src/browser/test-browser.js";
import { redactTrace, TraceTooLarge } from "../src/browser/trace-redaction.js";
import { runSteps } from "../src/steps/runner.js";
import { StepFailure, Variables } from "../src/steps/variables.js";
import {
  type BrowserTarget,
  browserTargetEgress,
  chromiumPath,
  startBrowserTarget,
  stepsOf,
} from "./browser-target.js";

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Width and height from a PNG's IHDR chunk. */
const pngSize = (png: Uint8Array) => {
  const view = Buffer.from(png);
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
};
const isPng = (bytes: Uint8Array) => pngSignature.every((byte, i) => bytes[i] === byte);

/** The forms a value takes in the text of a trace, a log or a request: each must be absent. */
function formsOf(value: string): Record<string, string> {
  const utf8 = Buffer.from(value, "utf8");
  return {
    raw: value,
    "JSON-escaped": JSON.stringify(value).slice(1, -1),
    encodeURIComponent: encodeURIComponent(value),
    "form-encoded": new URLSearchParams({ v: value }).toString().slice(2),
    "HTML-escaped": value.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"),
    base64: utf8.toString("base64"),
    base64url: utf8.toString("base64url"),
  };
}

/** Which forms of `value` occur in `bytes`, read as UTF-8 and as Latin-1 (binary entries). */
function leaks(bytes: Uint8Array, value: string): string[] {
  const texts = [Buffer.from(bytes).toString("utf8"), Buffer.from(bytes).toString("latin1")];
  const found = Object.entries(formsOf(value)).filter(([, form]) =>
    texts.some((text) => text.includes(form)),
  );
  // The value's UTF-8 bytes anywhere, whatever surrounds them.
  if (Buffer.from(bytes).includes(Buffer.from(value, "utf8"))) found.push(["UTF-8 bytes", ""]);
  return [...new Set(found.map(([name]) => name))];
}

describe("browser artifacts: screenshots, the trace and the page's log", function () {
  this.timeout(60_000);
  let target: BrowserTarget;
  let pool: BrowserPool;
  before(async () => {
    target = await startBrowserTarget();
    pool = new BrowserPool({ executablePath: chromiumPath, contexts: 2 });
  });
  after(async () => {
    await pool?.close();
    await target?.close();
  });

  const variables = { SECRET: secret, EMAIL: "alice@example.com" };
  const run = (steps: object[], options: { recordTrace?: boolean; traceMaxBytes?: number } = {}) =>
    runSteps(stepsOf(steps), {
      baseUrl: target.url,
      variables,
      egress: browserTargetEgress,
      browsers: pool,
      ...options,
    });
  const open = (path: string) => ({ name: `open ${path}`, browser: { goto: { url: path } } });
  const fails = { name: "fails", browser: { expect: { title: "Not this one" }, timeoutMs: 300 } };
  const kinds = (artifacts: Artifact[]) =>
    artifacts.map(({ kind, name, step }) => `${ArtifactKind[kind]} ${name} ${step}`);

  describe("screenshots", () => {
    it("are PNGs: the viewport, the whole page, and the page when a step failed", async () => {
      const outcome = await run([
        open("/tall"),
        { name: "view", browser: { screenshot: { name: "viewport" } } },
        { name: "page", browser: { screenshot: { name: "whole page", fullPage: true } } },
        fails,
      ]);
      expect(outcome.failedStep).to.equal(4);
      const screenshots = outcome.artifacts.filter((artifact) => artifact.kind === ArtifactKind.SCREENSHOT);
      expect(kinds(screenshots)).to.deep.equal([
        "SCREENSHOT viewport 2",
        "SCREENSHOT whole page 3",
        "SCREENSHOT failure 4",
      ]);
      for (const screenshot of screenshots) {
        expect(screenshot.contentType).to.equal("image/png");
        expect(isPng(screenshot.content), `${screenshot.name} is a PNG`).to.equal(true);
      }
      const [viewport, whole, failure] = screenshots.map((screenshot) => pngSize(screenshot.content));
      expect(viewport).to.deep.equal({ width: 1280, height: 720 });
      expect(failure).to.deep.equal({ width: 1280, height: 720 });
      expect(whole?.height).to.be.at.least(3000);
    });

    it("past the size bounds, a screenshot step fails saying so", async () => {
      const browser = new TestBrowser(pool, new Variables({}), { maxZipBytes: 1024, maxUnzippedBytes: 4096 });
      expect(() => browser.keepScreenshot("huge", 1, new Uint8Array(maxScreenshotBytes + 1)))
        .to.throw(StepFailure)
        .with.property("message", "the screenshot is larger than 5 MiB");
      for (let i = 0; i < 4; i++) browser.keepScreenshot(`big ${i}`, 1, new Uint8Array(maxScreenshotBytes));
      expect(() => browser.keepScreenshot("one more", 1, new Uint8Array(1)))
        .to.throw(StepFailure)
        .with.property("message", "the test's screenshots would exceed 20 MiB");
    });
  });

  describe("the trace", () => {
    it("is kept when the test fails, not when it passes, and always when the test asks", async () => {
      const failed = await run([open("/"), fails]);
      expect(kinds(failed.artifacts)).to.deep.equal(["SCREENSHOT failure 2", "TRACE trace 0"]);
      const passed = await run([open("/")]);
      expect(passed.artifacts).to.deep.equal([]);
      const recorded = await run([open("/")], { recordTrace: true });
      expect(kinds(recorded.artifacts)).to.deep.equal(["TRACE trace 0"]);
      const [trace] = recorded.artifacts;
      expect(trace?.contentType).to.equal("application/zip");
      const entries = unzipSync(trace?.content ?? new Uint8Array());
      expect(Object.keys(entries)).to.include.members(["trace.trace", "trace.network"]);
      expect(strFromU8(entries["trace.trace"] ?? new Uint8Array())).to.include('"method":"goto"');
    });

    it("holds {{NAME}}, never the value, of a variable typed into a page that echoes it", async () => {
      const outcome = await run(
        [
          open("/echo-form"),
          { name: "type it", browser: { fill: { locator: { label: "Value" }, value: "{{SECRET}}" } } },
          { name: "send", browser: { click: { locator: { role: "button", name: "Send" } } } },
          {
            name: "echoed",
            browser: { expect: { locator: { testId: "echo" }, text: "You typed: {{SECRET}}" } },
          },
          { name: "on the echo page", browser: { waitFor: { url: "/echo?value=*" } } },
          // The page posted the value back and fetched a binary holding it: both bodies are in the trace.
          { name: "sent back", browser: { waitFor: { text: "Sent back" } } },
        ],
        { recordTrace: true },
      );
      expect(outcome.summary).to.equal("6 steps passed");
      // The target saw the value itself: the page really echoed it.
      expect(target.hits).to.include("POST /collect");
      const trace = outcome.artifacts.find((artifact) => artifact.kind === ArtifactKind.TRACE);
      expect(trace, "a trace").to.not.equal(undefined);
      const entries = unzipSync(trace?.content ?? new Uint8Array());
      for (const [name, bytes] of Object.entries(entries))
        expect(leaks(bytes, secret), `forms of the value in ${name}`).to.deep.equal([]);
      const events = strFromU8(entries["trace.trace"] ?? new Uint8Array());
      expect(events).to.include('"value":"{{SECRET}}"'); // the fill action's parameter
      const network = strFromU8(entries["trace.network"] ?? new Uint8Array());
      expect(network).to.include("/collect");
      // Every line still parses, and every resource the events name is in the zip: the trace
      // viewer opens it (a redacted resource is renamed after its new content).
      for (const text of [events, network])
        for (const line of text.split("\n").filter(Boolean))
          expect(() => JSON.parse(line), line.slice(0, 80)).not.to.throw();
      const named = [...network.matchAll(/"_file":"([^"]+)"/g)].map((match) => match[1] as string);
      expect(named.length, "resources named by the network log").to.be.at.least(4);
      // Only the binary /blob answer holding the value is left out; every text body was redacted.
      const missing = named.filter((file) => !(file in entries));
      expect(missing).to.have.length(1);
      expect(missing[0]).to.match(/\.bin$/);
      expect(Object.keys(entries)).to.not.include("trace.stacks");

      const log = outcome.artifacts.find((artifact) => artifact.kind === ArtifactKind.BROWSER_LOG);
      expect(log?.contentType).to.equal("application/json");
      expect(leaks(log?.content ?? new Uint8Array(), secret)).to.deep.equal([]);
      const { entries: lines } = JSON.parse(strFromU8(log?.content ?? new Uint8Array())) as {
        entries: { kind: string; text?: string }[];
      };
      expect(lines.filter((line) => line.kind === "console").map((line) => line.text)).to.include(
        "typed {{SECRET}}",
      );
    });

    it("is left out past BROWSER_TRACE_MAX_BYTES, and the log says so", async () => {
      const outcome = await run([open("/"), fails], { traceMaxBytes: 2048 });
      expect(kinds(outcome.artifacts)).to.deep.equal(["SCREENSHOT failure 2", "BROWSER_LOG browser-log 0"]);
      const log = JSON.parse(strFromU8(outcome.artifacts[1]?.content ?? new Uint8Array())) as {
        entries: { kind: string; text: string }[];
      };
      expect(log.entries).to.deep.equal([
        {
          at: 0,
          kind: "executor",
          text: "no trace: the trace is larger than 2 KiB (BROWSER_TRACE_MAX_BYTES)",
        },
      ]);
    });
  });

  describe("the browser log", () => {
    it("lists the page's console errors and failed responses, kept with a failed test", async () => {
      const outcome = await run([
        open("/noisy"),
        { name: "wait", browser: { waitFor: { text: "Noisy page" } } },
        fails,
      ]);
      const log = outcome.artifacts.find((artifact) => artifact.kind === ArtifactKind.BROWSER_LOG);
      const { entries, omitted } = JSON.parse(strFromU8(log?.content ?? new Uint8Array())) as {
        entries: { kind: string; text?: string; status?: number; url?: string; method?: string }[];
        omitted: number;
      };
      expect(omitted).to.equal(0);
      const shown = entries.map(({ kind, text, status, url, method }) => ({
        kind,
        text,
        status,
        url,
        method,
      }));
      expect(shown).to.deep.include({
        kind: "console",
        text: "something broke",
        status: undefined,
        url: `${target.url}/noisy`,
        method: undefined,
      });
      expect(shown).to.deep.include({
        kind: "response",
        text: undefined,
        status: 500,
        url: `${target.url}/status/500`,
        method: "GET",
      });
    });
  });

  describe("trace redaction, entry by entry", () => {
    const vars = new Variables({ TOKEN: "tok-7f3a9c51" });
    const limits = { maxZipBytes: 1024 * 1024, maxUnzippedBytes: 4 * 1024 * 1024 };
    const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");
    const page = "<p>token tok-7f3a9c51</p>";
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, ...Buffer.from("tok-7f3a9c51")]);
    const zip = zipSync({
      "trace.trace": strToU8(`${JSON.stringify({ type: "before", params: { value: "tok-7f3a9c51" } })}\n`),
      "trace.network": strToU8(
        `${JSON.stringify({ response: { content: { _sha1: `${sha1(page)}.html` } } })}\n`,
      ),
      [`resources/${sha1(page)}.html`]: strToU8(page),
      "resources/font.woff2": new Uint8Array([0, 1, 0xff, 0xfe, 2]),
      "resources/blob.dat": new Uint8Array([0, 0xff, ...Buffer.from("tok-7f3a9c51"), 0xc0]),
      "screencast/frame.jpeg": jpeg,
      "trace.stacks": strToU8('{"files":["/app/services/executor/src/steps/browser.ts"]}'),
    });

    it("redacts text entries, renames a redacted resource, keeps images, drops binaries holding a value", async () => {
      const entries = unzipSync(await redactTrace(zip, vars, limits));
      const redactedPage = "<p>token {{TOKEN}}</p>";
      expect(Object.keys(entries).sort()).to.deep.equal(
        [
          "resources/font.woff2",
          `resources/${sha1(redactedPage)}.html`,
          "screencast/frame.jpeg",
          "trace.network",
          "trace.trace",
        ].sort(),
      );
      expect(strFromU8(entries["trace.trace"] as Uint8Array)).to.equal(
        '{"type":"before","params":{"value":"{{TOKEN}}"}}\n',
      );
      expect(strFromU8(entries["trace.network"] as Uint8Array)).to.include(
        `"_sha1":"${sha1(redactedPage)}.html"`,
      );
      expect(strFromU8(entries[`resources/${sha1(redactedPage)}.html`] as Uint8Array)).to.equal(redactedPage);
      // A picture is what the page showed, like a screenshot.
      expect(entries["screencast/frame.jpeg"]).to.deep.equal(jpeg);
    });

    it("refuses a trace past its bounds, zipped or unzipped", async () => {
      const refusal = (bounds: typeof limits) =>
        redactTrace(zip, vars, bounds).then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(await refusal({ ...limits, maxZipBytes: 100 }))
        .to.be.instanceOf(TraceTooLarge)
        .with.property("message", "the trace is larger than 100 bytes");
      expect(await refusal({ ...limits, maxUnzippedBytes: 100 }))
        .to.be.instanceOf(TraceTooLarge)
        .with.property("message", "the trace unzips to more than 100 bytes");
    });
  });
});
