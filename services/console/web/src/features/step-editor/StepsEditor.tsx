// The steps of a test case being edited: each step's name and its kind's form, in run order. Steps
// are added, removed (with Undo) and reordered with buttons or from the keyboard (Alt+ArrowUp /
// Alt+ArrowDown anywhere inside a step); each move is announced to screen readers.
import { type KeyboardEvent, useEffect, useLayoutEffect, useRef, useState } from "react";
import { FieldSet } from "../../components/Field";
import { TextField } from "../../components/Inputs";
import type { Said } from "./kind-editor";
import { emptyStep, type KindId, kindIds, maxSteps, type StepDraft, withKind } from "./kinds";
import { kindOf, offeredKinds, stepKinds } from "./step-kinds";

/** What the page says about the steps' fields. */
export interface StepMessages {
  /** The messages of a step's field, by the step's key and the field's name in it. */
  said: (stepKey: string, field: string) => Said;
  /** Whether any field of the step whose name starts with `prefix` has a message. */
  attention: (stepKey: string, prefix: string) => boolean;
}

export function StepsEditor({
  steps,
  onChange,
  messages,
  listSaid,
}: {
  steps: StepDraft[];
  onChange: (steps: StepDraft[]) => void;
  messages: StepMessages;
  /** About the list as a whole (no step, more than 100). */
  listSaid: Said;
}) {
  const { said, attention } = messages;
  const [announcement, setAnnouncement] = useState("");
  const [removed, setRemoved] = useState<{ step: StepDraft; index: number }>();
  // What had focus before a move, to keep it there: React moves a step's elements in the page,
  // which takes focus away from whatever inside them had it.
  const keepFocus = useRef<HTMLElement | null>(null);
  // A step just added: its name gets focus.
  const focusName = useRef<string | null>(null);
  const list = useRef<HTMLOListElement>(null);

  useLayoutEffect(() => {
    const element = keepFocus.current;
    keepFocus.current = null;
    if (element?.isConnected && document.activeElement !== element) element.focus();
  });
  useEffect(() => {
    const key = focusName.current;
    focusName.current = null;
    if (key) list.current?.querySelector<HTMLElement>(`[data-step="${key}"] .step-name-input`)?.focus();
  });

  const title = (step: StepDraft) => (step.name.trim() ? `“${step.name.trim()}”` : "without a name");
  const move = (index: number, by: -1 | 1) => {
    const to = index + by;
    const step = steps[index];
    if (!step || to < 0 || to >= steps.length) return;
    keepFocus.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const next = [...steps];
    next.splice(index, 1);
    next.splice(to, 0, step);
    onChange(next);
    setAnnouncement(
      `Step ${title(step)} moved ${by < 0 ? "up" : "down"}: now step ${to + 1} of ${steps.length}.`,
    );
  };
  const remove = (index: number) => {
    const step = steps[index];
    if (!step) return;
    onChange(steps.filter((_, i) => i !== index));
    setRemoved({ step, index });
    setAnnouncement(`Step ${index + 1} ${title(step)} removed.`);
  };
  const undo = () => {
    if (!removed) return;
    const next = [...steps];
    next.splice(Math.min(removed.index, next.length), 0, removed.step);
    onChange(next);
    focusName.current = removed.step.key;
    setRemoved(undefined);
    setAnnouncement(
      `Step ${title(removed.step)} is back as step ${Math.min(removed.index, steps.length) + 1}.`,
    );
  };
  const add = (kind: KindId) => {
    const step = emptyStep(kind);
    onChange([...steps, step]);
    focusName.current = step.key;
    setRemoved(undefined);
    setAnnouncement(`Step ${steps.length + 1} added.`);
  };
  const onKeyDown = (index: number) => (event: KeyboardEvent) => {
    if (!event.altKey || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) return;
    event.preventDefault();
    move(index, event.key === "ArrowUp" ? -1 : 1);
  };
  const full = steps.length >= maxSteps;

  return (
    <>
      <p className="muted small">
        Run in order; the first that fails ends the test. Move a step with its arrows, or with Alt+↑ and Alt+↓
        from anywhere inside it.
      </p>
      <p className="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
      <ol className="steps steps-editor" ref={list}>
        {steps.map((step, index) => {
          const kind = kindOf(step);
          const Editor = kind.Editor;
          const name = said(step.key, "name");
          const number = index + 1;
          const fieldSaid = (field: string) => said(step.key, field);
          return (
            <li
              key={step.key}
              className="step step-editing"
              data-step={step.key}
              onKeyDown={onKeyDown(index)}
            >
              <div className="step-head">
                <span className="step-number" aria-hidden="true">
                  {number}
                </span>
                <h3>
                  <span className="visually-hidden">Step {number}: </span>
                  {step.name.trim() || <span className="muted">Step {number}</span>}
                  <span className="step-summary">
                    {stepKinds[step.kind].label} · {kind.summary(step.draft)}
                  </span>
                </h3>
                <div className="step-actions">
                  <button
                    type="button"
                    className="button button-small button-quiet"
                    aria-label={`Move step ${number} up`}
                    aria-keyshortcuts="Alt+ArrowUp"
                    disabled={index === 0}
                    onClick={() => move(index, -1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    className="button button-small button-quiet"
                    aria-label={`Move step ${number} down`}
                    aria-keyshortcuts="Alt+ArrowDown"
                    disabled={index === steps.length - 1}
                    onClick={() => move(index, 1)}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    className="button button-small button-danger"
                    aria-label={`Remove step ${number}`}
                    onClick={() => remove(index)}
                  >
                    Remove
                  </button>
                </div>
              </div>
              <div className="step-form">
                <TextField
                  label="Step name"
                  hint="Names the step in run results. At most 200 characters."
                  {...name}
                  required
                  className="input step-name-input"
                  placeholder="log in"
                  value={step.name}
                  onChange={(value) =>
                    onChange(steps.map((s) => (s.key === step.key ? { ...s, name: value } : s)))
                  }
                />
                <FieldSet legend="Kind" hint={kind.hint}>
                  <div className="choices">
                    {kindIds.map((id) => (
                      <label key={id} className="choice">
                        <input
                          type="radio"
                          name={`${step.key}-kind`}
                          checked={step.kind === id}
                          onChange={() =>
                            onChange(steps.map((s) => (s.key === step.key ? withKind(s, id) : s)))
                          }
                        />
                        {stepKinds[id].label}
                      </label>
                    ))}
                  </div>
                </FieldSet>
                <Editor
                  draft={step.draft}
                  onChange={(draft) =>
                    onChange(steps.map((s) => (s.key === step.key ? ({ ...s, draft } as StepDraft) : s)))
                  }
                  said={fieldSaid}
                  attention={(...prefixes) => prefixes.some((prefix) => attention(step.key, prefix))}
                />
              </div>
            </li>
          );
        })}
      </ol>
      {removed && (
        <p className="notice notice-info undo-notice">
          Step {title(removed.step)} removed.{" "}
          <button type="button" className="link-button" onClick={undo}>
            Undo
          </button>
        </p>
      )}
      <div className="field steps-foot">
        {offeredKinds.map((kind) => (
          <button
            key={kind}
            type="button"
            className="button"
            disabled={full}
            onClick={() => add(kind)}
            {...(listSaid.error && { "data-error-focus": true, "aria-describedby": "steps-list-error" })}
          >
            {offeredKinds.length === 1 ? "Add step" : stepKinds[kind].addLabel}
          </button>
        ))}
        {full && <small role="status">{maxSteps} steps: the most a test case holds.</small>}
        {listSaid.error && (
          <small id="steps-list-error" className="field-error">
            {listSaid.error}
          </small>
        )}
      </div>
    </>
  );
}
