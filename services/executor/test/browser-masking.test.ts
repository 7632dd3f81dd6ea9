// No secret in a picture: a screenshot (the failure's, a step's) paints over every element whose value
// or text holds a variable's value and every password input; the trace records no screencast frames.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { unzipSync } from "fflate";
import { PNG } from "pngjs";
import { ArtifactKind } from "../src/browser/artifacts.js";
import { BrowserPool } from "../src/browser/pool.js";
import { runSteps } from "../src/steps/runner.js";
import {
  type BrowserTarget,
  browserTargetEgress,
  chromiumPath,
  startBrowserTarget,
  stepsOf,
} from "./browser-target.js";

/** A PNG decoded to its pixels (pngjs: every PNG Chromium may write, filters and all). */
function decodePng(png: Uint8Array): {
  width: number;
  height: number;
  pixel(x: number, y: number): number[];
} {
  const image = PNG.sync.read(Buffer.from(png));
  return {
    width: image.width,
    height: image.height,
    // pngjs gives RGBA whatever the file's colour type; the alpha is left out.
    pixel: (x, y) => [...image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 3)],
  };
}

/** The text a reader of the picture would see, as tesseract reads it (Debian's tesseract-ocr). */
function readText(png: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), "testrun-ocr-"));
  try {
    writeFileSync(join(dir, "shot.png"), png);
    return execFileSync("tesseract", [join(dir, "shot.png"), "stdout"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("browser artifacts: no secret in a picture", function () {
  this.timeout(60_000);
  let target: BrowserTarget;
  let pool: BrowserPool;
  before(async () => {
    target = await startBrowserTarget();
    pool = new BrowserPool({ executablePath: chromiumPath, contexts: 1 });
  });
  after(async () => {
    await pool?.close();
    await target?.close();
  });

  const value = "Hunter2Secret9";
  /** The page as it looks unmasked, with the value typed: what OCR must be able to read. */
  const unmaskedShot = async () => {
    const context = await pool.openContext(new AbortController().signal);
    try {
      const page = await context.context.newPage();
      await page.goto(new URL("/typed", target.url).href);
      await page.fill("#text", value);
      return await page.screenshot();
    } finally {
      await context.close();
    }
  };
  const boxes = async () => {
    // The elements' boxes, measured in a page of our own (the executor's is closed by then).
    const context = await pool.openContext(new AbortController().signal);
    try {
      const page = await context.context.newPage();
      await page.goto(new URL("/typed", target.url).href);
      await page.fill("#pw", value);
      await page.fill("#text", value);
      const box = async (selector: string) => {
        const found = await page.locator(selector).boundingBox();
        if (!found) throw new Error(`no box for ${selector}`);
        return found;
      };
      return {
        pw: await box("#pw"),
        text: await box("#text"),
        echo: await box("#echoed"),
        long: await box("#long"),
      };
    } finally {
      await context.close();
    }
  };

  it("the failure screenshot paints over the typed password, the input's value and the echoed text", async () => {
    const outcome = await runSteps(
      stepsOf([
        { name: "open", browser: { goto: { url: "/typed" } } },
        { name: "password", browser: { fill: { locator: { css: "#pw" }, value: "{{PASSWORD}}" } } },
        { name: "text", browser: { fill: { locator: { css: "#text" }, value: "{{PASSWORD}}" } } },
        { name: "shot", browser: { screenshot: { name: "typed" } } },
        { name: "fails", browser: { expect: { title: "Not this one" }, timeoutMs: 300 } },
      ]),
      { baseUrl: target.url, variables: { PASSWORD: value }, egress: browserTargetEgress, browsers: pool },
    );
    expect(outcome.failedStep).to.equal(5);
    const screenshots = outcome.artifacts.filter((artifact) => artifact.kind === ArtifactKind.SCREENSHOT);
    expect(screenshots.map((shot) => shot.name)).to.deep.equal(["typed", "failure"]);
    const measured = await boxes();
    for (const shot of screenshots) {
      const image = decodePng(shot.content);
      for (const [name, box] of Object.entries(measured)) {
        const centre = image.pixel(Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2));
        expect(centre, `${shot.name}: ${name} at its centre`).to.deep.equal([0xff, 0x00, 0xff]);
      }
      // Outside them the page is as it was (white), not one big mask.
      expect(image.pixel(image.width - 5, image.height - 5)).to.deep.equal([0xff, 0xff, 0xff]);
    }
    const trace = outcome.artifacts.find((artifact) => artifact.kind === ArtifactKind.TRACE);
    const entries = Object.keys(unzipSync(trace?.content ?? new Uint8Array()));
    expect(entries).to.include("trace.trace");
    expect(
      entries.filter((entry) => /\.(jpe?g|png)$/.test(entry)),
      "no screencast frames",
    ).to.deep.equal([]);
  });

  it("leaves no text of the value that OCR can read in the failure screenshot, where it reads it unmasked", async () => {
    // The control: the same page unmasked shows the value in text a reader (tesseract) can read.
    expect(readText(await unmaskedShot())).to.contain(value);
    const outcome = await runSteps(
      stepsOf([
        { name: "open", browser: { goto: { url: "/typed" } } },
        { name: "text", browser: { fill: { locator: { css: "#text" }, value: "{{PASSWORD}}" } } },
        { name: "fails", browser: { expect: { title: "Not this one" }, timeoutMs: 300 } },
      ]),
      { baseUrl: target.url, variables: { PASSWORD: value }, egress: browserTargetEgress, browsers: pool },
    );
    const failure = outcome.artifacts.find(
      (artifact) => artifact.kind === ArtifactKind.SCREENSHOT && artifact.name === "failure",
    );
    const text = readText(failure?.content ?? new Uint8Array());
    // The page's own words are read, so the picture was readable; the value is not among them.
    expect(text).to.contain("You typed");
    expect(text).not.to.contain(value);
    expect(text).not.to.contain(value.slice(0, 6));
  });
});
