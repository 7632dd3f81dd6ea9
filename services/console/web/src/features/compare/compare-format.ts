// How the Compare view words a comparison (docs/console.md, "Compare"): each change's name and
// place in the URL, the order the differences are listed in (RunsService's own), what the base
// is ("previous run on staging, same plan"), and a step's change as the fields that differ.
import { TestChange } from "@testrun/gen/testrun/runs/v1/runs_pb";

/** The changes in the order CompareRuns lists them: the differences first, the unchanged last. */
export const changesInOrder = [
  TestChange.NEWLY_FAILING,
  TestChange.FIXED,
  TestChange.FLAKY,
  TestChange.STILL_FAILING,
  TestChange.NEW_TEST,
  TestChange.REMOVED_TEST,
  TestChange.UNCHANGED,
] as const;

export const changeName: Record<TestChange, string> = {
  [TestChange.UNSPECIFIED]: "Unchanged",
  [TestChange.NEWLY_FAILING]: "Newly failing",
  [TestChange.FIXED]: "Fixed",
  [TestChange.FLAKY]: "Flaky",
  [TestChange.STILL_FAILING]: "Still failing",
  [TestChange.NEW_TEST]: "New",
  [TestChange.REMOVED_TEST]: "Removed",
  [TestChange.UNCHANGED]: "Unchanged",
};

/** A change as the URL's `?change=` names it: "newly-failing", "still-failing", "new", … */
export const changeParam = (change: TestChange) => changeName[change].toLowerCase().replace(" ", "-");

export const changeOfParam = (param: string | null) =>
  changesInOrder.find((change) => changeParam(change) === param);

/**
 * How the base was chosen, in the header's parentheses: "previous run on staging, same plan";
 * "chosen" for a named base. `planned`: the run has a test plan (else the rule matches its name).
 */
export function baseRuleText(rule: string, environment: string, planned: boolean): string {
  if (rule === "named") return "chosen as the base";
  return `previous run on ${environment}, same ${planned ? "plan" : "name"}`;
}

/** One field of a step that differs: its path in the step's JSON and the values (JSON; "" when absent). */
export interface FieldChange {
  path: string;
  before: string;
  after: string;
}

/** The longest value shown whole in a field's line; a longer one is cut, saying so. */
const maxValue = 200;

const shown = (value: unknown) => {
  const text = JSON.stringify(value);
  return text.length <= maxValue ? text : `${text.slice(0, maxValue)}… (${text.length} characters)`;
};

/** Every leaf of a JSON value by its path ("http.headers.accept", "expect.status", "lines[2]"). */
function leaves(value: unknown, path: string, into: Map<string, string>): Map<string, string> {
  if (value === undefined) return into;
  if (Array.isArray(value) && value.length > 0)
    value.forEach((item, i) => {
      leaves(item, `${path}[${i}]`, into);
    });
  else if (value !== null && typeof value === "object" && Object.keys(value).length > 0)
    for (const [key, item] of Object.entries(value)) leaves(item, path ? `${path}.${key}` : key, into);
  else into.set(path || "(step)", shown(value));
  return into;
}

const parsed = (json: string): unknown => {
  if (!json) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    // Not JSON (never from RunsService): the whole text as one value.
    return json;
  }
};

/**
 * The fields of a step that differ between two versions (step.proto's JSON each), in the after
 * version's order then the removed ones: what a person reads instead of two long JSON lines.
 */
export function fieldChanges(before: string, after: string): FieldChange[] {
  const then = leaves(parsed(before), "", new Map());
  const now = leaves(parsed(after), "", new Map());
  const changes: FieldChange[] = [];
  for (const [path, value] of now)
    if (then.get(path) !== value) changes.push({ path, before: then.get(path) ?? "", after: value });
  for (const [path, value] of then) if (!now.has(path)) changes.push({ path, before: value, after: "" });
  return changes;
}

/** A step's name from its JSON, when it has one. */
export function stepName(json: string): string {
  const step = parsed(json);
  return step && typeof step === "object" && "name" in step && typeof step.name === "string" ? step.name : "";
}
