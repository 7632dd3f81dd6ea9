// The test case editor's model: a test case as the form holds it while it is edited (texts as
// typed, maps as ordered rows), and what every kind of step provides to be edited. Pure: no React,
// no browser, so its rules are unit tested (services/console/test/web/editor-model.test.ts).
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";

/** One entry of a map (headers, query, saved values…) as a row: name and value as typed, in order. */
export interface Pair {
  name: string;
  value: string;
}

/**
 * Which field of the form something is about: `name`, `tags`, `steps` for the test case, and
 * `<step key>:<field>` inside a step (`s3:name`, `s3:request.path`, `s3:request.headers#1` for the
 * second header row).
 */
export type FieldId = string;

/** What is wrong (or worth a warning) per field, in sentences. */
export type FieldMessages = Map<FieldId, string>;

/** The id of a field of a step. */
export const stepField = (stepKey: string, field: string): FieldId => `${stepKey}:${field}`;

/** The field of a map or list row: `request.headers#2`. */
export const rowField = (field: string, index: number) => `${field}#${index}`;

/** Adds a message to a field, after any it already has. */
export function addMessage(messages: FieldMessages, field: FieldId, message: string): void {
  const before = messages.get(field);
  messages.set(field, before ? `${before} ${message}` : message);
}

/**
 * What a kind of step brings to the editor: its label, an empty step, reading and writing
 * testrun.catalog.v1.Step, and what the rest of the editor needs to know about its fields (the
 * texts that may name `{{NAME}}`, the names it saves, where a catalog field path points). Its
 * editor component and summary sit beside it in `step-kinds.tsx`.
 */
export interface StepKindLogic<Draft> {
  /** As the "Add step" choice and the step's heading name it: "HTTP request". */
  label: string;
  empty(): Draft;
  /** The step's kind as this kind's draft; undefined when the step is of another kind. */
  fromStep(kind: Step["kind"]): Draft | undefined;
  /**
   * The kind as a Step's oneof; what cannot be written (a JSON text that does not parse, a
   * number that is not one) is added to `problems` under the step's field, and the value left out.
   */
  toStep(draft: Draft, problems: FieldMessages, field: (name: string) => FieldId): Step["kind"];
  /** One line: "POST /api/login · expects 200 · saves token". */
  summary(draft: Draft): string;
  /** Every text the executor interpolates, with its field: where `{{NAME}}` is looked up. */
  interpolated(draft: Draft): { field: string; text: string }[];
  /** The names of the values the step saves for later steps. */
  saves(draft: Draft): string[];
  /**
   * The field a catalog FieldViolation names, given the rest of its path after `steps[i].<kind>`
   * (e.g. `.request.headers["X-Id"]`), with a prefix naming the entry when the field is a list
   * shown as one control (`“700”: `). Undefined when the path is not one of its fields.
   */
  fieldOf(rest: string, draft: Draft): { field: string; prefix?: string } | undefined;
  /**
   * What a field of the step (as `fieldOf` names it: `request.path`, `request.headers#1`) holds in
   * the draft, to tell whether it still holds what a refused save sent.
   */
  valueAt(field: string, draft: Draft): unknown;
}

/** Keys for steps and rows: stable while the list is reordered (React keys, errors' places). */
let lastKey = 0;
export const newKey = () => `s${++lastKey}`;
