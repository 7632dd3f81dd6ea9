// What keeps a secret out of a picture (docs/security.md, "Screenshots and traces"): before a
// screenshot is taken, every element whose value or text holds a variable's value, and every password
// input, is painted over. Covered: the page's main frame and its open shadow roots; not covered:
// iframes, closed shadow roots, canvas and images that draw the value.
import type { Page } from "playwright-core";
import type { Variables } from "../steps/variables.js";

/** The colour masked elements are painted in (tests look for it). */
export const maskColor = "#FF00FF";

const markAttribute = "data-testrun-mask";

// The code that runs in the page, as text: the executor is compiled without the DOM's types.
const walkSource = `(root, visit) => {
  const walk = (root) => {
    for (const element of root.querySelectorAll("*")) {
      visit(element);
      if (element.shadowRoot) walk(element.shadowRoot);
    }
  };
  walk(root);
}`;

/** Marks the elements to paint over: a value or text node holding a value, a password input. */
const markSource = `({ values, attribute }) => {
  const holds = (text) => !!text && values.some((value) => text.includes(value));
  (${walkSource})(document, (element) => {
    const isField = element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement;
    if ((isField && holds(element.value)) || (element instanceof HTMLInputElement && element.type === "password")) {
      element.setAttribute(attribute, "");
      return;
    }
    // The element that holds the text node itself, so a long paragraph is masked, not its page.
    for (const node of element.childNodes) {
      if (node.nodeType === Node.TEXT_NODE && holds(node.textContent)) {
        element.setAttribute(attribute, "");
        return;
      }
    }
  });
}`;

const unmarkSource = `(attribute) => (${walkSource})(document, (element) => element.removeAttribute(attribute))`;

/** A PNG of the page with the secrets painted over. */
export async function maskedScreenshot(
  page: Page,
  vars: Variables,
  options: { fullPage?: boolean; timeout: number },
): Promise<Buffer> {
  const args = { values: vars.secretValues(), attribute: markAttribute };
  // A page that cannot run script (gone, hung) still gets its password inputs masked below.
  await bounded(page.evaluate(`(${markSource})(${JSON.stringify(args)})`), options.timeout);
  try {
    return await page.screenshot({
      type: "png",
      ...options,
      mask: [page.locator(`[${markAttribute}], input[type=password]`)],
      maskColor,
    });
  } finally {
    await bounded(page.evaluate(`(${unmarkSource})(${JSON.stringify(markAttribute)})`), options.timeout);
  }
}

/** Waits for a script in the page at most `ms` (a hung page must not hold the test), ignoring its failure. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work.catch(() => undefined), timeout]);
  clearTimeout(timer);
}
