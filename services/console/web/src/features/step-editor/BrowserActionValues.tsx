// The values a browser step's action needs, after the element it acts on: the text to fill, the
// options to select, what a wait waits for, what an expectation expects, the screenshot's name.
import { ElementState } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { FieldSet } from "../../components/Field";
import { CodeField, SelectField, TextField } from "../../components/Inputs";
import { type BrowserDraft, browserBounds, elementStates } from "./browser-draft";
import { expectedFields, urlPatternHint } from "./browser-labels";
import { Checkbox } from "./Checkbox";
import { type Change, type Said, setter } from "./kind-editor";
import { rowField } from "./model";
import { TextRows } from "./TextRows";

export function BrowserActionValues({
  draft,
  change,
  said,
}: {
  draft: BrowserDraft;
  change: Change<BrowserDraft>;
  said: (field: string) => Said;
}) {
  const set = setter(change);
  const { action } = draft;
  const expected = action === "expect" ? expectedFields[draft.check] : undefined;
  return (
    <>
      {action === "fill" && (
        <CodeField
          label="Value"
          hint={
            <>
              Typed into the input; empty clears it. Keep secrets in variables:{" "}
              <code>{"{{DEMO_PASSWORD}}"}</code> is typed, and kept out of the stored trace.
            </>
          }
          {...said("fill.value")}
          placeholder="{{DEMO_USER}}"
          value={draft.fillValue}
          onChange={(value) =>
            change((d) => {
              d.fillValue = value;
            })
          }
        />
      )}

      {action === "select" && (
        <FieldSet
          legend="Options to choose"
          hint={`Each matched by its value or its label; several for a multiple select (1 to ${browserBounds.options}).`}
        >
          <TextRows
            label="Option"
            rows={draft.options}
            onChange={set("options")}
            said={(index) => said(rowField("select.options", index))}
            listSaid={said("select.options")}
            max={browserBounds.options}
            addLabel="Add option"
            placeholder="Blue"
          />
        </FieldSet>
      )}

      {action === "waitFor" && draft.waitFor === "element" && (
        <SelectField
          label="State"
          error={said("waitFor.state").error}
          className="input input-fit"
          value={String(draft.state === ElementState.UNSPECIFIED ? ElementState.VISIBLE : draft.state)}
          onChange={(state) =>
            change((d) => {
              d.state = Number(state) as ElementState;
            })
          }
        >
          {elementStates.map(({ state, label }) => (
            <option key={state} value={state}>
              {label}
            </option>
          ))}
        </SelectField>
      )}
      {action === "waitFor" && draft.waitFor === "url" && (
        <CodeField
          label="URL pattern"
          required
          hint={urlPatternHint}
          {...said("waitFor.url")}
          placeholder="/account/**"
          value={draft.waitUrl}
          onChange={(url) =>
            change((d) => {
              d.waitUrl = url;
            })
          }
        />
      )}
      {action === "waitFor" && draft.waitFor === "text" && (
        <TextField
          label="Text"
          required
          hint="Waits until the page shows it. May use {{NAME}}."
          {...said("waitFor.text")}
          placeholder="Saved"
          value={draft.waitText}
          onChange={(text) =>
            change((d) => {
              d.waitText = text;
            })
          }
        />
      )}

      {expected && (
        <CodeField
          label={expected.label}
          required
          hint={expected.hint}
          {...said("expect.expected")}
          className={`input input-code${draft.check === "count" ? " input-number" : ""}`}
          {...(draft.check === "count" && { inputMode: "numeric" as const })}
          placeholder={expected.placeholder}
          value={draft.expected}
          onChange={(value) =>
            change((d) => {
              d.expected = value;
            })
          }
        />
      )}

      {action === "screenshot" && (
        <>
          <TextField
            label="Screenshot name"
            required
            hint={`Unique in the test case: letters, digits, space, - _ and . (at most ${browserBounds.screenshotNameCharacters}). Stored with the test's results.`}
            {...said("screenshot.name")}
            placeholder="home page"
            value={draft.screenshotName}
            onChange={(name) =>
              change((d) => {
                d.screenshotName = name;
              })
            }
          />
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
    </>
  );
}
