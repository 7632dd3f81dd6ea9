// A test case's tags in the editor (catalog.proto, TestCase.tags).
import { useId, useState } from "react";
import { controlNotes, FieldNotes } from "../../components/Field";

/** The most tags a test case has, and the longest (catalog.proto, TestCase.tags). */
const maxTags = 50;

/**
 * Tags as chips and a text box: Enter or a comma adds what was typed, and so does leaving the box
 * (a typed tag is never dropped by a click on Save).
 */
export function TagsInput({
  tags,
  onChange,
  error,
}: {
  tags: string[];
  onChange: (tags: string[]) => void;
  error: string | undefined;
}) {
  const id = useId();
  const [typed, setTyped] = useState("");
  const [note, setNote] = useState<string>();
  /** Adds each text that is not a tag yet (ignoring letter case, as runs select tags). */
  const add = (texts: string[]) => {
    const added = [...tags];
    const already: string[] = [];
    for (const text of texts.map((t) => t.trim()).filter(Boolean)) {
      if (added.some((t) => t.toLowerCase() === text.toLowerCase())) already.push(text);
      else added.push(text);
    }
    setNote(already.length > 0 ? `“${already.join("”, “")}” is already a tag.` : undefined);
    if (added.length > tags.length) onChange(added);
  };
  const full = tags.length >= maxTags;
  const hint = full
    ? `${maxTags} tags: the most a test case has.`
    : "Enter or a comma adds one. Runs select test cases by tag; each at most 64 characters.";
  return (
    <div className="field">
      <label htmlFor={id}>
        Tags<span className="muted field-optional"> (optional)</span>
      </label>
      <div className="tags-input">
        {tags.map((tag) => (
          <span key={tag} className="chip">
            {tag}
            <button
              type="button"
              className="chip-remove"
              aria-label={`Remove tag ${tag}`}
              onClick={() => onChange(tags.filter((t) => t !== tag))}
            >
              ×
            </button>
          </span>
        ))}
        <input
          id={id}
          className="input tags-input-text"
          placeholder={full ? "" : "Add a tag"}
          disabled={full}
          value={typed}
          onChange={(event) => {
            // A comma ends a tag: what comes before each is added, what follows the last is kept.
            const parts = event.target.value.split(",");
            const rest = parts.pop() ?? "";
            if (parts.length > 0) add(parts);
            setTyped(rest);
          }}
          onKeyDown={(event) => {
            if (event.key === "Enter") {
              event.preventDefault();
              add([typed]);
              setTyped("");
            }
          }}
          onBlur={() => {
            add([typed]);
            setTyped("");
          }}
          {...controlNotes(id, { error, warning: note, hint })}
        />
      </div>
      <FieldNotes id={id} error={error} warning={note} hint={hint} />
    </div>
  );
}
