// The test case editor's first panel: the case's name, tags, whether it runs and keeps traces, and
// how many times a failed attempt is run again.
import { SelectField, TextField } from "../../components/Inputs";
import type { Said } from "../step-editor/kind-editor";
import type { CaseDraft } from "../step-editor/kinds";
import { retriesHint, retriesLabel, retryCounts } from "./retries";
import { TagsInput } from "./TagsInput";

export function CaseAbout({
  draft,
  onChange,
  said,
}: {
  draft: CaseDraft;
  onChange: (draft: CaseDraft) => void;
  /** The messages of the case's own fields (`name`, `tags`). */
  said: (field: string) => Said;
}) {
  return (
    <section className="panel editor-about" aria-label="About">
      <TextField
        label="Name"
        hint="Shown in runs and results. At most 200 characters."
        {...said("name")}
        required
        placeholder="log in with the demo user"
        value={draft.name}
        onChange={(name) => onChange({ ...draft, name })}
      />
      <TagsInput
        tags={draft.tags}
        onChange={(tags) => onChange({ ...draft, tags })}
        error={said("tags").error}
      />
      <label className="checkbox-field">
        <input
          type="checkbox"
          checked={draft.enabled}
          onChange={(event) => onChange({ ...draft, enabled: event.target.checked })}
        />
        <span>
          <strong>Enabled</strong>
          <br />
          <span className="muted small">
            Plans and tags run it. A disabled case runs only when chosen by name.
          </span>
        </span>
      </label>
      <label className="checkbox-field">
        <input
          type="checkbox"
          checked={draft.recordTrace}
          onChange={(event) => onChange({ ...draft, recordTrace: event.target.checked })}
        />
        <span>
          <strong>Record a trace every time</strong>
          <br />
          <span className="muted small">
            Its browser steps keep a Playwright trace of each run, not only of a failed one. Traces hold what
            the page showed.
          </span>
        </span>
      </label>
      <SelectField
        label="Retries"
        hint={`${retriesHint} A plan's or a run's retries replace it.`}
        value={String(draft.retries)}
        onChange={(retries) => onChange({ ...draft, retries: Number(retries) })}
      >
        {retryCounts.map((count) => (
          <option key={count} value={String(count)}>
            {retriesLabel(count)}
          </option>
        ))}
      </SelectField>
    </section>
  );
}
