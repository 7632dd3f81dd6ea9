// A test plan as its editor holds it: the bound on its cases, what "Copy my changes" gives, and
// which chosen case a refused save names.
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { errorOf, isNotFound } from "../../api";

/** The most test cases a plan holds (CatalogService.CreateTestPlan): the most one run holds. */
export const planBound = 500;

/** What the plan's runs do with a disabled test case (catalog.proto, TestCase.enabled). */
export const disabledRule = "Disabled test cases stay in the plan, but its runs leave them out.";

/** A plan draft as "Copy my changes" gives it: its name, description and test cases in run order. */
export function planAsText(name: string, description: string, chosen: TestCase[], retries?: number): string {
  return [
    `Name: ${name}`,
    `Description: ${description || "(none)"}`,
    `Retries: ${retries === undefined ? "each test case's own" : retries}`,
    chosen.length === 0 ? "Test cases: none" : "Test cases, in run order:",
    ...chosen.map((testCase, i) => `${i + 1}. ${testCase.name} (${testCase.id})`),
  ].join("\n");
}

/**
 * A save refused because a test case is no longer one of the project's: the catalog's NOT_FOUND
 * names the id ("tc_… is not a test case of this project"). `testCase` is the chosen case it names,
 * none once that case was removed from the plan (then nothing is left to say).
 */
export function caseNotFound(error: unknown, chosen: TestCase[]): { testCase?: TestCase } | undefined {
  if (!isNotFound(error)) return undefined;
  const message = errorOf(error).rawMessage;
  if (!/\btc_\w+/.test(message)) return undefined;
  return { testCase: chosen.find((c) => message.includes(c.id)) };
}
