// The registry of step kinds as the editor shows them: each kind's label, empty step, editor
// component and one-line summary, beside its logic in kinds.ts.
import type { ComponentType } from "react";
import { BrowserStepEditor } from "./BrowserStepEditor";
import { HttpStepEditor } from "./HttpStepEditor";
import type { KindEditorProps } from "./kind-editor";
import { type KindDrafts, type KindId, kindIds, type StepDraft, stepKindLogic } from "./kinds";

export interface StepKind<Draft> {
  label: string;
  /** The "Add step" button for this kind. */
  addLabel: string;
  /** Under the kind's choice in a step: what a step of this kind does. */
  hint: string;
  empty: () => Draft;
  Editor: ComponentType<KindEditorProps<Draft>>;
  summary: (draft: Draft) => string;
}

export const stepKinds: { [K in KindId]: StepKind<KindDrafts[K]> } = {
  http: {
    ...stepKindLogic.http,
    addLabel: "Add HTTP step",
    hint: "Send a request to the environment and check the response.",
    Editor: HttpStepEditor,
  },
  browser: {
    ...stepKindLogic.browser,
    addLabel: "Add browser step",
    hint: "One action on the test's browser page (Chromium), or a check of what it shows.",
    Editor: BrowserStepEditor,
  },
};

/** The kinds to offer under "Add step", in order. */
export const offeredKinds = kindIds;

/** A step's kind as shown, typed for its draft. */
export const kindOf = (step: StepDraft) => stepKinds[step.kind] as StepKind<StepDraft["draft"]>;
