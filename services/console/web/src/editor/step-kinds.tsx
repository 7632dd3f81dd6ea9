// The registry of step kinds as the editor shows them: each kind's label, empty step, editor
// component and one-line summary. HTTP is the only kind today; a browser step is added here with
// its editor, beside its logic in kinds.ts.
import type { ComponentType } from "react";
import { HttpStepEditor, type KindEditorProps } from "./HttpStepEditor";
import { type KindDrafts, type KindId, kindIds, type StepDraft, stepKindLogic } from "./kinds";

export interface StepKind<Draft> {
  label: string;
  empty: () => Draft;
  Editor: ComponentType<KindEditorProps<Draft>>;
  summary: (draft: Draft) => string;
}

export const stepKinds: { [K in KindId]: StepKind<KindDrafts[K]> } = {
  http: { ...stepKindLogic.http, Editor: HttpStepEditor },
};

/** The kinds to offer under "Add step", in order. */
export const offeredKinds = kindIds;

/** A step's kind as shown, typed for its draft. */
export const kindOf = (step: StepDraft) => stepKinds[step.kind] as StepKind<StepDraft["draft"]>;
