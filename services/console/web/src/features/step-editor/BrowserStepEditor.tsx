// The form of a browser step (step.proto, BrowserStep): the action, the element it acts on
// (LocatorFields.tsx), the values the action needs (BrowserActionValues.tsx), and the step's
// timeout. Each field shows an example, since a locator is only as good as what it names.
import { FieldSet } from "../../components/Field";
import { CodeField, NumberField, SelectField } from "../../components/Inputs";
import { BrowserActionValues } from "./BrowserActionValues";
import {
  actionLabels,
  type BrowserAction,
  type BrowserDraft,
  browserActions,
  browserBounds,
  type ExpectCheck,
  expectChecks,
  usesLocator,
} from "./browser-draft";
import { actionHints, checkLabels, n } from "./browser-labels";
import { Checkbox } from "./Checkbox";
import { changer, type KindEditorProps, setter } from "./kind-editor";
import { LocatorFields } from "./LocatorFields";

/** How a wait ends, as the form offers it. */
const waitModes = [
  ["element", "An element reaches a state"],
  ["url", "The URL matches"],
  ["text", "A text appears"],
] as const;

export function BrowserStepEditor({ draft, onChange, said }: KindEditorProps<BrowserDraft>) {
  const change = changer(draft, onChange);
  const set = setter(change);
  const { action } = draft;

  return (
    <div className="browser-step">
      <div className="editor-grid">
        <SelectField<BrowserAction>
          label="Action"
          hint={actionHints[action]}
          error={said("action").error}
          value={action}
          onChange={(chosen) =>
            change((d) => {
              d.action = chosen;
            })
          }
        >
          {browserActions.map((choice) => (
            <option key={choice} value={choice}>
              {actionLabels[choice]}
            </option>
          ))}
        </SelectField>
        <NumberField
          label="Timeout (ms)"
          optional
          hint={`The whole step, waiting included: 1 to ${n(browserBounds.ms)}; empty: 10,000.`}
          {...said("timeoutMs")}
          placeholder="10000"
          value={draft.timeoutMs}
          onChange={set("timeoutMs")}
        />
      </div>

      {action === "goto" && (
        <CodeField
          label="URL"
          required
          hint={
            <>
              A path under the environment's base URL (<code>/login</code>) or an absolute http(s) URL; at
              most {n(browserBounds.urlCharacters)} characters. May use {"{{NAME}}"}.
            </>
          }
          {...said("goto.url")}
          placeholder="/login"
          value={draft.gotoUrl}
          onChange={(url) =>
            change((d) => {
              d.gotoUrl = url;
            })
          }
        />
      )}

      {action === "press" && (
        <>
          <CodeField
            label="Key"
            required
            hint={
              <>
                As Playwright names keys: <code>Enter</code>, <code>Tab</code>, <code>Escape</code>,{" "}
                <code>ArrowDown</code>, <code>a</code>, <code>Control+A</code>.
              </>
            }
            {...said("press.key")}
            className="input input-code input-number"
            placeholder="Enter"
            value={draft.key}
            onChange={set("key")}
          />
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
            {waitModes.map(([mode, label]) => (
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
        <SelectField<ExpectCheck>
          label="Check"
          error={said("expect.check").error}
          value={draft.check}
          onChange={set("check")}
        >
          {expectChecks.map((check) => (
            <option key={check} value={check}>
              {checkLabels[check]}
            </option>
          ))}
        </SelectField>
      )}

      {usesLocator(draft) && <LocatorFields draft={draft} change={change} said={said} />}

      <BrowserActionValues draft={draft} change={change} said={said} />
    </div>
  );
}
