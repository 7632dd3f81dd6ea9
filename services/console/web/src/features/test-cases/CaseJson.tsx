// The test case editor's JSON view: the case as text in the file format, to paste or copy.
import { CopyButton } from "../../components/CopyButton";
import { TextAreaField } from "../../components/Inputs";

/** The JSON view's text as typed, the text it opened with, and why it could not be read back. */
export interface JsonText {
  text: string;
  opened: string;
  error: string | undefined;
}

export function CaseJson({
  json,
  onChange,
  onDiscard,
}: {
  json: JsonText;
  onChange: (json: JsonText) => void;
  onDiscard: () => void;
}) {
  return (
    <>
      <TextAreaField
        label="The test case as JSON"
        hint="Form and Save read this text; until then the form keeps what it had."
        error={json.error}
        className="input input-code json-view"
        rows={Math.min(40, Math.max(12, json.text.split("\n").length + 1))}
        spellCheck={false}
        autoCapitalize="off"
        value={json.text}
        onChange={(text) => onChange({ ...json, text, error: undefined })}
      />
      <div className="json-tools">
        <CopyButton text={json.text} label="Copy JSON" />
        {json.text !== json.opened && (
          <span className="small">
            <button type="button" className="link-button" onClick={onDiscard}>
              Discard the JSON changes
            </button>{" "}
            <span className="muted">and go back to the form as it was.</span>
          </span>
        )}
      </div>
    </>
  );
}
