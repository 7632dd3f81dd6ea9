// A real browser for the console's tests: Debian's chromium driven by playwright-core (no browser
// download works here), in its headless shell (chromium-headless-shell, what Playwright runs headless
// tests in): the console's browser suites took a quarter less time in it than in the full browser. Screenshots of every page the tests visit go to .tmp/screenshots (ignored
// by git) to be looked at.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@testrun/testing";
import { expect } from "chai";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { signInLinkOf } from "./console-client.js";

export const screenshotDir = join(repoRoot, ".tmp", "screenshots");

/** The two widths the console must work at: a laptop and a phone. */
export const viewports = {
  wide: { width: 1280, height: 800 },
  narrow: { width: 390, height: 844 },
} as const;

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium-headless-shell",
    args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-gpu"],
  });
}

/**
 * Saves what the page shows now as .tmp/screenshots/<name>.png. PNG, though JPEG encodes a full
 * page in half the time: the screenshots are there to be looked at, and the file viewer we look
 * with shows PNG only.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}

/** Saves the page as `<name>-<width>` and checks nothing overflows sideways. */
export async function shot(page: Page, name: string, width: keyof typeof viewports): Promise<void> {
  await screenshot(page, `${name}-${viewports[width].width}`);
  expect(await horizontalOverflow(page), `${name} overflows`).to.be.at.most(0);
}

/** The error shown at a field (components/Field.tsx): the element its aria-describedby names first. */
export async function errorAt(input: Locator): Promise<string> {
  expect(await input.getAttribute("aria-invalid")).to.equal("true");
  const [errorId] = ((await input.getAttribute("aria-describedby")) ?? "").split(" ");
  const error = input.page().locator(`[id="${errorId}"]`);
  expect(await error.getAttribute("class")).to.equal("field-error");
  return (await error.textContent()) ?? "";
}

/**
 * Fails when the input shows an error: marked invalid, or described by a field error (as a field
 * is once its refused value was changed).
 */
export async function expectNoErrorAt(input: Locator): Promise<void> {
  expect(await input.getAttribute("aria-invalid"), "marked invalid").to.equal(null);
  const ids = ((await input.getAttribute("aria-describedby")) ?? "").split(" ").filter(Boolean);
  for (const id of ids)
    expect(
      await input.page().locator(`[id="${id}"]`).getAttribute("class"),
      "described by an error",
    ).not.to.equal("field-error");
}

/** Fails when the page is wider than its viewport (something overflows sideways). */
export async function horizontalOverflow(page: Page): Promise<number> {
  // A string, evaluated in the page: this file is compiled without the DOM's types.
  return page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
}

/**
 * Signs the page in as a member with a fresh sign-in link, answering the link page's question
 * ("Sign in as …?"), and waits until it has left the sign-in pages. Answers the link's token.
 */
export async function openSignInLink(page: Page, system: System, memberId: string): Promise<string> {
  const link = await signInLinkOf(system, memberId);
  await page.goto(link.url);
  await page.getByRole("button", { name: /^Sign in as / }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/sign-in"));
  return link.token;
}
