// The kinds of step the editor knows, and a whole test case between the form and the catalog's
// messages. HTTP and browser steps; a kind is added here (its draft in KindDrafts, its logic in
// stepKindLogic) and in step-kinds.tsx (its editor), and nowhere else.
import { create } from "@bufbuild/protobuf";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Step, StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { BrowserDraft } from "./browser-draft.js";
import { browserStep } from "./browser-step.js";
import { type HttpDraft, httpStep } from "./http-step.js";
import { type FieldMessages, newKey, type StepKindLogic, stepField } from "./model.js";

/** Each kind's draft, by the name of its field in Step's `kind` oneof. */
export interface KindDrafts {
  http: HttpDraft;
  browser: BrowserDraft;
}
export type KindId = keyof KindDrafts;

/**
 * One step as the form holds it: a stable key, the name, and its kind's draft. `setAside` keeps
 * the drafts of the kinds the step had before its kind was changed (never sent), so changing it
 * back gives back what was typed.
 */
export type StepDraft = {
  [K in KindId]: { key: string; name: string; kind: K; draft: KindDrafts[K]; setAside?: Partial<KindDrafts> };
}[KindId];

/** A test case as the form holds it. */
export interface CaseDraft {
  name: string;
  tags: string[];
  enabled: boolean;
  /** Browser steps record a Playwright trace on every run, not only when the test fails. */
  recordTrace: boolean;
  /** How many times a failed attempt is run again in a run, 0 to 3 (TestCase.retries). */
  retries: number;
  steps: StepDraft[];
}

export const stepKindLogic: { [K in KindId]: StepKindLogic<KindDrafts[K]> } = {
  http: httpStep,
  browser: browserStep,
};

export const kindIds = Object.keys(stepKindLogic) as KindId[];

/** A step's kind logic, typed for its draft. */
export const logicOf = (step: StepDraft) => stepKindLogic[step.kind] as StepKindLogic<StepDraft["draft"]>;

/** The most steps a test case holds (catalog.proto, CreateTestCaseRequest.steps). */
export const maxSteps = 100;

export function emptyStep(kind: KindId = "http"): StepDraft {
  return { key: newKey(), name: "", kind, draft: stepKindLogic[kind].empty() } as StepDraft;
}

export const emptyCase = (): CaseDraft => ({
  name: "",
  tags: [],
  enabled: true,
  recordTrace: false,
  retries: 0,
  steps: [emptyStep()],
});

/** The step as the other kind: what it held as that kind before, else an empty one; its name stays. */
export function withKind(step: StepDraft, kind: KindId): StepDraft {
  if (step.kind === kind) return step;
  const { [kind]: before, ...others } = step.setAside ?? {};
  const setAside = { ...others, [step.kind]: step.draft };
  return {
    key: step.key,
    name: step.name,
    kind,
    draft: before ?? stepKindLogic[kind].empty(),
    setAside,
  } as StepDraft;
}

/** A stored step as the form holds it; undefined for a kind this console does not know yet. */
export function draftOfStep(step: Step): StepDraft | undefined {
  for (const kind of kindIds) {
    const draft = stepKindLogic[kind].fromStep(step.kind);
    if (draft !== undefined) return { key: newKey(), name: step.name, kind, draft } as StepDraft;
  }
  return undefined;
}

/** A test case (as the catalog returns it, or as read from the file format) for the form. */
export function draftOfCase(
  testCase: Pick<TestCase, "name" | "tags" | "steps"> & {
    enabled?: boolean;
    recordTrace?: boolean;
    retries?: number;
  },
): {
  draft: CaseDraft;
  /** Steps of a kind the form cannot edit (a newer kind): the form must not open them. */
  unknownKinds: number;
} {
  const steps = testCase.steps.map(draftOfStep);
  return {
    draft: {
      name: testCase.name,
      tags: [...testCase.tags],
      enabled: testCase.enabled ?? true,
      recordTrace: testCase.recordTrace ?? false,
      retries: testCase.retries ?? 0,
      steps: steps.filter((step) => step !== undefined),
    },
    unknownKinds: steps.filter((step) => step === undefined).length,
  };
}

/** What the catalog is sent for a test case. */
export interface CaseValue {
  name: string;
  tags: string[];
  enabled: boolean;
  recordTrace: boolean;
  retries: number;
  steps: Step[];
}

/**
 * The draft as the catalog's messages, and what the form cannot turn into them (a JSON text that
 * does not parse, two headers of one name…), by field. Rules the catalog checks (lengths, methods,
 * ranges) are left to it: it names every bad field, and the form shows each at its place.
 */
export function caseOfDraft(draft: CaseDraft): { value: CaseValue; problems: FieldMessages } {
  const problems: FieldMessages = new Map();
  const steps = draft.steps.map((step) =>
    create(StepSchema, {
      name: step.name,
      kind: logicOf(step).toStep(step.draft, problems, (field) => stepField(step.key, field)),
    }),
  );
  const { name, enabled, recordTrace, retries } = draft;
  return { value: { name, tags: [...draft.tags], enabled, recordTrace, retries, steps }, problems };
}

/** The longest test case name (catalog.proto, CreateTestCaseRequest.name), in characters. */
const maxNameCharacters = 200;

/** A duplicate's name, "<name> (copy)", the name cut (ending with "…") so the whole fits 200 characters. */
export function copyName(name: string): string {
  const suffix = " (copy)";
  const characters = [...name.trim()];
  if (characters.length + suffix.length <= maxNameCharacters) return `${name.trim()}${suffix}`;
  return `${characters.slice(0, maxNameCharacters - suffix.length - 1).join("")}…${suffix}`;
}
