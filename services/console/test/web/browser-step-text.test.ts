// How the console words a browser step where steps are shown read-only (the test case and test
// result pages): the action, its element as the Playwright call that finds it, and what it types,
// chooses or checks, `{{NAME}}` as written.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { BrowserStepSchema, LocatorSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { expect } from "chai";
import { browserStepText, locatorCode, quoted } from "../../web/src/browser-step-text.js";

const text = (json: unknown) => browserStepText(fromJson(BrowserStepSchema, json as JsonValue));
/** The step as one line, as a person reads it on the page. */
const line = (json: unknown) => {
  const { action, target, lines } = text(json);
  return [action, target, ...lines].filter((part) => part !== undefined).join(" · ");
};

describe("console: browser steps in words", () => {
  it("names every action, its element as Playwright code, and what it types, chooses or checks", () => {
    const cases: [unknown, string][] = [
      [{ goto: { url: "/login" } }, "goto · /login"],
      [
        { click: { locator: { role: "button", name: "Sign in" } } },
        "click · getByRole('button', { name: 'Sign in' })",
      ],
      [
        { fill: { locator: { label: "Email" }, value: "{{EMAIL}}" } },
        "fill · getByLabel('Email') · Types “{{EMAIL}}”",
      ],
      [{ fill: { locator: { placeholder: "Search" } } }, "fill · getByPlaceholder('Search') · Clears it"],
      [
        { press: { locator: { css: "input[name='q']" }, key: "Enter" } },
        "press · Enter · On locator('input[name=\\'q\\']')",
      ],
      [{ press: { key: "Control+A" } }, "press · Control+A · On the element that has the focus"],
      [
        { select: { locator: { testId: "country" }, options: ["de", "France"] } },
        "select · getByTestId('country') · Chooses “de”, “France”",
      ],
      [
        { check: { locator: { role: "checkbox", name: "I agree", exact: true } } },
        "check · getByRole('checkbox', { name: 'I agree', exact: true })",
      ],
      [
        { uncheck: { locator: { label: "News", exact: true } } },
        "uncheck · getByLabel('News', { exact: true })",
      ],
      [{ hover: { locator: { text: "Menu", nth: 1 } } }, "hover · getByText('Menu').first()"],
      [{ click: { locator: { text: "More", nth: 3 } } }, "click · getByText('More').nth(2)"],
      [
        { waitFor: { locator: { testId: "spinner" }, state: "ELEMENT_STATE_DETACHED" } },
        "wait for · getByTestId('spinner') · Until it is gone from the page",
      ],
      [{ waitFor: { locator: { role: "dialog" } } }, "wait for · getByRole('dialog') · Until it is visible"],
      [{ waitFor: { url: "**/home" } }, "wait for URL · **/home"],
      [{ waitFor: { text: "Welcome {{NAME}}" } }, "wait for text · Welcome {{NAME}}"],
      [
        { expect: { locator: { testId: "greeting" }, visible: true } },
        "expect · getByTestId('greeting') · Is visible",
      ],
      [
        { expect: { locator: { text: "Error" }, hidden: true } },
        "expect · getByText('Error') · Is hidden or absent",
      ],
      [
        { expect: { locator: { testId: "greeting" }, text: "Hello" } },
        "expect · getByTestId('greeting') · Text contains “Hello”",
      ],
      [{ expect: { locator: { label: "Email" }, value: "" } }, "expect · getByLabel('Email') · Value is “”"],
      [
        { expect: { locator: { role: "listitem" }, count: 1 } },
        "expect · getByRole('listitem') · Matches 1 element",
      ],
      [
        { expect: { locator: { role: "listitem" }, count: 0 } },
        "expect · getByRole('listitem') · Matches 0 elements",
      ],
      [{ expect: { url: "/home" } }, "expect URL · /home"],
      [{ expect: { title: "Shop" } }, "expect title · Contains “Shop”"],
      [{ screenshot: { name: "home", fullPage: true } }, "screenshot · home · Of the whole page"],
      [{ screenshot: { name: "top" } }, "screenshot · top · Of the visible part of the page"],
    ];
    for (const [json, words] of cases) expect(line(json), JSON.stringify(json)).to.equal(words);
  });

  it("writes locators as code that reads back: quotes, backslashes and line breaks escaped", () => {
    const locator = fromJson(LocatorSchema, { text: "it's a\\b\nc" });
    const code = locatorCode(locator);
    expect(code).to.equal("getByText('it\\'s a\\\\b\\nc')");
    // The literal inside is JavaScript for the same text.
    expect(new Function(`return ${code.slice("getByText(".length, -1)}`)()).to.equal("it's a\\b\nc");
    expect(locatorCode(undefined)).to.equal("(no element)");
  });

  it("cuts a long value after 300 characters, saying how long it is", () => {
    expect(quoted("a".repeat(300))).to.equal(`“${"a".repeat(300)}”`);
    expect(quoted("a".repeat(100_000))).to.equal(`“${"a".repeat(300)}…” (100000 characters)`);
  });
});
