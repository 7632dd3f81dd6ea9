// The test case editor's two views of one draft: the form, or the case as JSON.
export type View = "form" | "json";

export function ViewSwitch({ view, onForm, onJson }: { view: View; onForm: () => void; onJson: () => void }) {
  return (
    <fieldset className="view-switch">
      <legend className="visually-hidden">Edit as</legend>
      <button
        type="button"
        className="button button-small"
        aria-pressed={view === "form"}
        onClick={() => view === "json" && onForm()}
      >
        Form
      </button>
      <button
        type="button"
        className="button button-small"
        aria-pressed={view === "json"}
        onClick={() => view === "form" && onJson()}
      >
        JSON
      </button>
    </fieldset>
  );
}
