// The element a browser step acts on: how it is found (a role and name, a label, a text, a
// placeholder, a test id or a CSS selector, as Playwright's locators find it), what names it, and
// which of several matches.
import { useId } from "react";
import { CodeField, NumberField, SelectField, TextField } from "../../components/Inputs";
import { type BrowserDraft, browserBounds, type LocatorKind, locatorKinds } from "./browser-draft";
import { commonRoles, locatorLabels, n } from "./browser-labels";
import { Checkbox } from "./Checkbox";
import type { Change, Said } from "./kind-editor";

export function LocatorFields({
  draft,
  change,
  said,
}: {
  draft: BrowserDraft;
  change: Change<BrowserDraft>;
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
        <SelectField<LocatorKind>
          label="Find it by"
          value={locator.by}
          onChange={(by) =>
            change((d) => {
              d.locator.by = by;
            })
          }
        >
          {locatorKinds.map((by) => (
            <option key={by} value={by}>
              {locatorLabels[by].choice}
            </option>
          ))}
        </SelectField>
        <CodeField
          label={kind.label}
          required
          hint={locator.by === "role" ? undefined : kind.hint}
          {...said("locator.value")}
          placeholder={kind.placeholder}
          list={locator.by === "role" ? rolesId : undefined}
          value={locator.value}
          onChange={(value) =>
            change((d) => {
              d.locator.value = value;
            })
          }
        />
      </div>
      {locator.by === "role" && (
        <datalist id={rolesId}>
          {commonRoles.map((role) => (
            <option key={role} value={role} />
          ))}
        </datalist>
      )}
      {showName && (
        <TextField
          label="Accessible name"
          optional
          hint={
            locator.by === "role"
              ? kind.hint
              : "Only a role has a name: remove it, or find the element by role."
          }
          {...said("locator.name")}
          placeholder="Sign in"
          value={locator.name}
          onChange={(name) =>
            change((d) => {
              d.locator.name = name;
            })
          }
        />
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
        <NumberField
          label="Which match"
          optional
          hint={`Empty: exactly one element must match. 1 picks the first of several, 2 the second… (at most ${n(browserBounds.nth)}).`}
          {...said("locator.nth")}
          className="input input-code input-number"
          value={locator.nth}
          onChange={(nth) =>
            change((d) => {
              d.locator.nth = nth;
            })
          }
        />
      </div>
    </fieldset>
  );
}
