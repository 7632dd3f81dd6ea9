// What an import reads and what the catalog answers of it: the size limits, the preview of a
// refusal, the result's items in document order and the sentences that sum them up.
import {
  ImportContentResponseSchema,
  type ImportedItem,
  type ImportContentResponse as ImportResult,
  ItemOutcome,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { errorOf } from "../../api";
import { catalogMessageBytes } from "../../catalog-bound";
import { count, plural } from "../../format";

/** What the console reads of an import at most: as much as the catalog takes in one call. */
export const maxImportBytes = catalogMessageBytes;
/** A larger file is not read at all: its items could not be under maxImportBytes anyway. */
export const maxFileBytes = 4 * maxImportBytes;

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** A file's problem found here, before any call: the field it is about and what is wrong. */
export interface ReadProblem {
  at: "file" | "text";
  message: string;
}

/** What the catalog answered: what the import does (or would do), and each item's problems. */
export interface Preview {
  result: ImportResult;
  /** Problems by item path (`testCases[3]`), each `[field in the item, description]`. */
  problems: Map<string, [string, string][]>;
  /** Problems of the document as a whole (`testCases`: too many). */
  general: string[];
}

/** The document items a refusal's violations name, grouped by item; its preview of the others. */
export function previewOfRefusal(error: unknown): Preview | undefined {
  const failure = errorOf(error);
  const [result] = failure.findDetails(ImportContentResponseSchema);
  if (!result) return undefined;
  const problems = new Map<string, [string, string][]>();
  const general: string[] = [];
  for (const { field, description } of failure
    .findDetails(FieldViolationsSchema)
    .flatMap((d) => d.violations)) {
    const item = /^(environments|variables|testCases|testPlans)\[\d+\]/.exec(field)?.[0];
    if (!item) {
      general.push(`${field}: ${description}`);
      continue;
    }
    const list = problems.get(item) ?? [];
    list.push([field.slice(item.length + 1), description]);
    problems.set(item, list);
  }
  return { result, problems, general };
}

export interface Row extends ImportedItem {
  kind: string;
}

export const kindOf = {
  environments: "Environment",
  variables: "Variable",
  testCases: "Test case",
  testPlans: "Test plan",
} as const;

/** The result's items, in document order: environments, variables, test cases, test plans. */
export const rowsOf = (result: ImportResult): Row[] =>
  (Object.keys(kindOf) as (keyof typeof kindOf)[]).flatMap((key) =>
    result[key].map((i) => ({ ...i, kind: kindOf[key] })),
  );

const what = {
  environments: "environment",
  variables: "variable",
  testCases: "test case",
  testPlans: "test plan",
} as const;

/** "3 test cases", "1 test plan" by outcome, for the sentences below. */
function counted(result: ImportResult, outcome: ItemOutcome): string[] {
  return (Object.keys(what) as (keyof typeof what)[]).flatMap((key) => {
    const n = result[key].filter((i) => i.outcome === outcome).length;
    return n > 0 ? [plural(n, what[key])] : [];
  });
}

/** "a", "a and b", "a, b and c". */
export const joined = (parts: string[]) =>
  parts.length <= 2 ? parts.join(" and ") : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;

/** "1 test case and 2 test plans", "as it is" / "as they are": the items of an outcome. */
function itemsOf(result: ImportResult, outcome: ItemOutcome): { text: string; one: boolean } {
  const total = rowsOf(result).filter((i) => i.outcome === outcome).length;
  return { text: joined(counted(result, outcome)), one: total === 1 };
}

export function previewSummary(result: ImportResult): string {
  const created = itemsOf(result, ItemOutcome.CREATED);
  const changed = itemsOf(result, ItemOutcome.CHANGED);
  const unchanged = itemsOf(result, ItemOutcome.UNCHANGED);
  const acts = [created.text && `creates ${created.text}`, changed.text && `changes ${changed.text}`].filter(
    Boolean,
  );
  const left = unchanged.text
    ? `, and leaves ${unchanged.text} as ${unchanged.one ? "it is" : "they are"}`
    : "";
  return `Applying ${acts.join(" and ")}${left}.`;
}

/** What the document does not hold: an import never deletes it. */
export function othersSentence(result: ImportResult): string {
  const parts = [
    result.otherTestCases > 0 && plural(result.otherTestCases, "other test case"),
    result.otherTestPlans > 0 && plural(result.otherTestPlans, "other test plan"),
  ].filter((part): part is string => part !== false);
  const one = result.otherTestCases + result.otherTestPlans === 1;
  return `${joined(parts)} of the project ${one ? "is" : "are"} not in the file: an import never deletes, so ${one ? "it stays as it is" : "they stay as they are"}.`;
}

export function appliedSummary(result: ImportResult): string {
  const created = counted(result, ItemOutcome.CREATED);
  const changed = counted(result, ItemOutcome.CHANGED);
  const unchanged = rowsOf(result).filter((i) => i.outcome === ItemOutcome.UNCHANGED).length;
  return [
    created.length > 0 && `Created ${joined(created)}.`,
    changed.length > 0 && `Changed ${joined(changed)}.`,
    unchanged > 0 &&
      `${count(unchanged)} ${unchanged === 1 ? "item was" : "items were"} already as in the file.`,
  ]
    .filter(Boolean)
    .join(" ");
}
