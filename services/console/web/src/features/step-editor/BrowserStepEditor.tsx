// The form of a browser step (step.proto, BrowserStep): the action, the element it acts on (found
// as Playwright's locators find it: a role and name, a label, a text, a placeholder, a test id or
// a CSS selector), the values the action needs, and the step's timeout. Each field shows an
// example, since a locator is only as good as what it names.
import { ElementState } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { type ReactNode, useId } from "react";
import { controlNotes, Field, FieldNotes, FieldSet } from "../../components/Field";
import {
  actionLabels,
  type BrowserAction,
  type BrowserDraft,
  browserActions,
  browserBounds,
  type ExpectCheck,
  elementStates,
  expectChecks,
  type LocatorKind,
  locatorKinds,
  usesLocator,
} from "./browser-step";
import type { KindEditorProps } from "./HttpStepEditor";
import { rowField } from "./model";
import { type Said, TextRows } from "./Rows";

const n = (value: number) => value.toLocaleString("en");

/** What each action does, under the action's choice. */
const actionHints: Record<BrowserAction, string> = {
  goto: "Loads a page and waits for its load event. The test's first browser step opens the browser.",
  click: "Clicks the element once it is visible, enabled and still.",
  fill: "Types a value into an input, replacing what it held.",
  press: "Presses a key on the element, or on whatever has focus.",
  select: "Chooses options of a <select>.",
  check: "Ticks a checkbox or radio button (passes if it already is).",
  uncheck: "Unticks a checkbox (passes if it already is).",
  hover: "Moves the mouse over the element (menus that open on hover).",
  waitFor: "Waits until an element reaches a state, the URL matches, or a text appears.",
  expect: "Checks the page, retrying until it holds or the step times out.",
  screenshot: "Saves a picture of the page with the test's results.",
};

const locatorLabels: Record<
  LocatorKind,
  { choice: string; label: string; placeholder: string; hint: ReactNode }
> = {
  role: {
    choice: "Role and name",
    label: "Role",
    placeholder: "button",
    hint: (
      <>
        An ARIA role, usually with its name: role <code>button</code> + name <code>Sign in</code>, role{" "}
        <code>link</code> + <code>Pricing</code>, role <code>textbox</code> + <code>Email</code>, role{" "}
        <code>heading</code> + <code>Welcome</code>.
      </>
    ),
  },
  label: {
    choice: "Label",
    label: "Label text",
    placeholder: "Email",
    hint: (
      <>
        The text of the field's <code>&lt;label&gt;</code> or <code>aria-label</code>, e.g. <code>Email</code>{" "}
        or <code>Password</code>.
      </>
    ),
  },
  text: {
    choice: "Text shown",
    label: "Text shown",
    placeholder: "Welcome back",
    hint: (
      <>
        Text the element shows, e.g. <code>Welcome back</code> or <code>Forgot your password?</code>.
      </>
    ),
  },
  placeholder: {
    choice: "Placeholder",
    label: "Placeholder",
    placeholder: "you@example.com",
    hint: (
      <>
        The input's placeholder, e.g. <code>you@example.com</code> or <code>Search…</code>.
      </>
    ),
  },
  testId: {
    choice: "Test id",
    label: "Test id",
    placeholder: "greeting",
    hint: (
      <>
        Its <code>data-testid</code> attribute: <code>greeting</code> finds{" "}
        <code>&lt;p data-testid="greeting"&gt;</code>.
      </>
    ),
  },
  css: {
    choice: "CSS selector",
    label: "CSS selector",
    placeholder: "form#login button[type=submit]",
    hint: (
      <>
        E.g. <code>form#login button[type=submit]</code> or <code>.alert-error</code>. A role or a label is
        sturdier: it survives a redesign.
      </>
    ),
  },
};

/** Roles people use most, offered as they type (any role Playwright's getByRole knows is taken). */
const commonRoles = [
  "button",
  "link",
  "textbox",
  "checkbox",
  "radio",
  "combobox",
  "heading",
  "listbox",
  "option",
  "menuitem",
  "tab",
  "dialog",
  "alert",
  "img",
  "navigation",
  "row",
  "cell",
  "switch",
  "searchbox",
];

const checkLabels: Record<ExpectCheck, string> = {
  visible: "The element is visible",
  hidden: "The element is hidden (or absent)",
  text: "The element's text contains",
  value: "The input's value equals",
  count: "How many elements match",
  url: "The page's URL matches",
  title: "The page's title contains",
};

const urlPatternHint = (
  <>
    A path (<code>/account</code>, appended to the environment's base URL) or an absolute URL; <code>*</code>{" "}
    matches within a path segment, <code>**</code> across them: <code>/orders/*</code>.
  </>
);

const expectedFields: Partial<Record<ExpectCheck, { label: string; placeholder: string; hint: ReactNode }>> =
  {
    text: {
      label: "Text it contains",
      placeholder: "Hello, {{DEMO_USER}}",
      hint: `Case-sensitive; at most ${n(browserBounds.expectedCharacters)} characters. May use {{NAME}}.`,
    },
    value: {
      label: "Value",
      placeholder: "{{DEMO_USER}}",
      hint: `The input's whole value; at most ${n(browserBounds.expectedCharacters)} characters. May use {{NAME}}.`,
    },
    count: {
      label: "Count",
      placeholder: "3",
      hint: `Exactly this many elements match (0 to ${n(browserBounds.count)}).`,
    },
    url: { label: "URL pattern", placeholder: "/account", hint: urlPatternHint },
    title: {
      label: "Title contains",
      placeholder: "Dashboard",
      hint: `Case-sensitive; at most ${n(browserBounds.titleCharacters)} characters.`,
    },
  };

export function BrowserStepEditor({ draft, onChange, said }: KindEditorProps<BrowserDraft>) {
  /** A changed copy: the draft is never changed in place (React compares it). */
  const change = (edit: (copy: BrowserDraft) => void) => {
    const copy = structuredClone(draft);
    edit(copy);
    onChange(copy);
  };
  const { action } = draft;
  const expected = action === "expect" ? expectedFields[draft.check] : undefined;

  return (
    <div className="browser-step">
      <div className="editor-grid">
        <Field label="Action" hint={actionHints[action]} error={said("action").error}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={action}
              onChange={(event) =>
                change((d) => {
                  d.action = event.target.value as BrowserAction;
                })
              }
            >
              {browserActions.map((choice) => (
                <option key={choice} value={choice}>
                  {actionLabels[choice]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Timeout (ms)"
          optional
          hint={`The whole step, waiting included: 1 to ${n(browserBounds.ms)}; empty: 10,000.`}
          {...said("timeoutMs")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              inputMode="numeric"
              placeholder="10000"
              value={draft.timeoutMs}
              onChange={(event) =>
                change((d) => {
                  d.timeoutMs = event.target.value;
                })
              }
            />
          )}
        </Field>
      </div>

      {action === "goto" && (
        <Field
          label="URL"
          required
          hint={
            <>
              A path under the environment's base URL (<code>/login</code>) or an absolute http(s) URL; at
              most {n(browserBounds.urlCharacters)} characters. May use {"{{NAME}}"}.
            </>
          }
          {...said("goto.url")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              autoCapitalize="off"
              spellCheck={false}
              placeholder="/login"
              value={draft.gotoUrl}
              onChange={(event) =>
                change((d) => {
                  d.gotoUrl = event.target.value;
                })
              }
            />
          )}
        </Field>
      )}

      {action === "press" && (
        <>
          <Field
            label="Key"
            required
            hint={
              <>
                As Playwright names keys: <code>Enter</code>, <code>Tab</code>, <code>Escape</code>,{" "}
                <code>ArrowDown</code>, <code>a</code>, <code>Control+A</code>.
              </>
            }
            {...said("press.key")}
          >
            {(control) => (
              <input
                {...control}
                className="input input-code input-number"
                autoCapitalize="off"
                spellCheck={false}
                placeholder="Enter"
                value={draft.key}
                onChange={(event) =>
                  change((d) => {
                    d.key = event.target.value;
                  })
                }
              />
            )}
          </Field>
          <Checkbox
            label="On an element"
            hint="Otherwise the key goes to whatever has focus (after a fill, the input filled)."
            checked={draft.pressOnElement}
            onChange={(checked) =>
              change((d) => {
                d.pressOnElement = checked;
              })
            }
          />
        </>
      )}

      {action === "waitFor" && (
        <FieldSet legend="Wait until" error={said("waitFor.mode").error}>
          <div className="choices">
            {(
              [
                ["element", "An element reaches a state"],
                ["url", "The URL matches"],
                ["text", "A text appears"],
              ] as const
            ).map(([mode, label]) => (
              <label key={mode} className="choice">
                <input
                  type="radio"
                  checked={draft.waitFor === mode}
                  onChange={() =>
                    change((d) => {
                      d.waitFor = mode;
                    })
                  }
                />
                {label}
              </label>
            ))}
          </div>
        </FieldSet>
      )}

      {action === "expect" && (
        <Field label="Check" error={said("expect.check").error}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={draft.check}
              onChange={(event) =>
                change((d) => {
                  d.check = event.target.value as ExpectCheck;
                })
              }
            >
              {expectChecks.map((check) => (
                <option key={check} value={check}>
                  {checkLabels[check]}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}

      {usesLocator(draft) && <LocatorFields draft={draft} change={change} said={said} />}

      {action === "fill" && (
        <Field
          label="Value"
          hint={
            <>
              Typed into the input; empty clears it. Keep secrets in variables:{" "}
              <code>{"{{DEMO_PASSWORD}}"}</code> is typed, and kept out of the stored trace.
            </>
          }
          {...said("fill.value")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              autoCapitalize="off"
              spellCheck={false}
              placeholder="{{DEMO_USER}}"
              value={draft.fillValue}
              onChange={(event) =>
                change((d) => {
                  d.fillValue = event.target.value;
                })
              }
            />
          )}
        </Field>
      )}

      {action === "select" && (
        <FieldSet
          legend="Options to choose"
          hint={`Each matched by its value or its label; several for a multiple select (1 to ${browserBounds.options}).`}
        >
          <TextRows
            label="Option"
            rows={draft.options}
            onChange={(options) =>
              change((d) => {
                d.options = options;
              })
            }
            said={(index) => said(rowField("select.options", index))}
            listSaid={said("select.options")}
            max={browserBounds.options}
            addLabel="Add option"
            placeholder="Blue"
          />
        </FieldSet>
      )}

      {action === "waitFor" && draft.waitFor === "element" && (
        <Field label="State" error={said("waitFor.state").error}>
          {(control) => (
            <select
              {...control}
              className="input input-fit"
              value={draft.state === ElementState.UNSPECIFIED ? ElementState.VISIBLE : draft.state}
              onChange={(event) =>
                change((d) => {
                  d.state = Number(event.target.value) as ElementState;
                })
              }
            >
              {elementStates.map(({ state, label }) => (
                <option key={state} value={state}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      {action === "waitFor" && draft.waitFor === "url" && (
        <Field label="URL pattern" required hint={urlPatternHint} {...said("waitFor.url")}>
          {(control) => (
            <input
              {...control}
              className="input input-code"
              autoCapitalize="off"
              spellCheck={false}
              placeholder="/account/**"
              value={draft.waitUrl}
              onChange={(event) =>
                change((d) => {
                  d.waitUrl = event.target.value;
                })
              }
            />
          )}
        </Field>
      )}
      {action === "waitFor" && draft.waitFor === "text" && (
        <Field
          label="Text"
          required
          hint="Waits until the page shows it. May use {{NAME}}."
          {...said("waitFor.text")}
        >
          {(control) => (
            <input
              {...control}
              className="input"
              placeholder="Saved"
              value={draft.waitText}
              onChange={(event) =>
                change((d) => {
                  d.waitText = event.target.value;
                })
              }
            />
          )}
        </Field>
      )}

      {expected && (
        <Field label={expected.label} required hint={expected.hint} {...said("expect.expected")}>
          {(control) => (
            <input
              {...control}
              className={`input input-code${draft.check === "count" ? " input-number" : ""}`}
              {...(draft.check === "count" && { inputMode: "numeric" as const })}
              autoCapitalize="off"
              spellCheck={false}
              placeholder={expected.placeholder}
              value={draft.expected}
              onChange={(event) =>
                change((d) => {
                  d.expected = event.target.value;
                })
              }
            />
          )}
        </Field>
      )}

      {action === "screenshot" && (
        <>
          <Field
            label="Screenshot name"
            required
            hint={`Unique in the test case: letters, digits, space, - _ and . (at most ${browserBounds.screenshotNameCharacters}). Stored with the test's results.`}
            {...said("screenshot.name")}
          >
            {(control) => (
              <input
                {...control}
                className="input"
                placeholder="home page"
                value={draft.screenshotName}
                onChange={(event) =>
                  change((d) => {
                    d.screenshotName = event.target.value;
                  })
                }
              />
            )}
          </Field>
          <Checkbox
            label="The whole page"
            hint="All of the scrollable page, not only what the window shows."
            checked={draft.fullPage}
            error={said("screenshot.fullPage").error}
            onChange={(checked) =>
              change((d) => {
                d.fullPage = checked;
              })
            }
          />
        </>
      )}
    </div>
  );
}

/** The element: how it is found, what names it, and which of several matches. */
function LocatorFields({
  draft,
  change,
  said,
}: {
  draft: BrowserDraft;
  change: (edit: (copy: BrowserDraft) => void) => void;
  said: (field: string) => Said;
}) {
  const rolesId = useId();
  const { locator } = draft;
  const kind = locatorLabels[locator.by];
  // The name belongs to a role; one read from a file with another kind stays shown for the catalog to refuse.
  const showName = locator.by === "role" || locator.name !== "";
  // Exact matching is about texts: a test id and a CSS selector match whole as they are.
  const showExact = locator.by !== "testId" && locator.by !== "css" ? true : locator.exact;
  return (
    <fieldset className="locator">
      <legend>Element</legend>
      <div className="editor-grid">
        <Field label="Find it by">
          {(control) => (
            <select
              {...control}
              className="input"
              value={locator.by}
              onChange={(event) =>
                change((d) => {
                  d.locator.by = event.target.value as LocatorKind;
                })
              }
            >
              {locatorKinds.map((by) => (
                <option key={by} value={by}>
                  {locatorLabels[by].choice}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label={kind.label}
          required
          hint={locator.by === "role" ? undefined : kind.hint}
          {...said("locator.value")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              autoCapitalize="off"
              spellCheck={false}
              placeholder={kind.placeholder}
              value={locator.value}
              {...(locator.by === "role" && { list: rolesId })}
              onChange={(event) =>
                change((d) => {
                  d.locator.value = event.target.value;
                })
              }
            />
          )}
        </Field>
      </div>
      {locator.by === "role" && (
        <datalist id={rolesId}>
          {commonRoles.map((role) => (
            <option key={role} value={role} />
          ))}
        </datalist>
      )}
      {showName && (
        <Field
          label="Accessible name"
          optional
          hint={
            locator.by === "role"
              ? kind.hint
              : "Only a role has a name: remove it, or find the element by role."
          }
          {...said("locator.name")}
        >
          {(control) => (
            <input
              {...control}
              className="input"
              placeholder="Sign in"
              value={locator.name}
              onChange={(event) =>
                change((d) => {
                  d.locator.name = event.target.value;
                })
              }
            />
          )}
        </Field>
      )}
      <div className="editor-grid">
        {showExact && (
          <Checkbox
            label="Exact text"
            hint="The whole text, letter case included; otherwise a part matches, ignoring case."
            checked={locator.exact}
            error={said("locator.exact").error}
            onChange={(checked) =>
              change((d) => {
                d.locator.exact = checked;
              })
            }
          />
        )}
        <Field
          label="Which match"
          optional
          hint={`Empty: exactly one element must match. 1 picks the first of several, 2 the second… (at most ${n(browserBounds.nth)}).`}
          {...said("locator.nth")}
        >
          {(control) => (
            <input
              {...control}
              className="input input-code input-number"
              inputMode="numeric"
              value={locator.nth}
              onChange={(event) =>
                change((d) => {
                  d.locator.nth = event.target.value;
                })
              }
            />
          )}
        </Field>
      </div>
    </fieldset>
  );
}

/** A checkbox with its label beside it and a hint (and an error) under the label. */
function Checkbox({
  label,
  hint,
  checked,
  error,
  onChange,
}: {
  label: string;
  hint: string;
  checked: boolean;
  error?: string | undefined;
  onChange: (checked: boolean) => void;
}) {
  const id = useId();
  return (
    <div className="field field-checkbox">
      <label className="checkbox-field">
        <input
          type="checkbox"
          checked={checked}
          onChange={(event) => onChange(event.target.checked)}
          {...controlNotes(id, { hint, error })}
        />
        <span>{label}</span>
      </label>
      <FieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}
