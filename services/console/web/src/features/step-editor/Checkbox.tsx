// A checkbox of a step's form with its label beside it and a hint (and an error) under the label.
import { useId } from "react";
import { controlNotes, FieldNotes } from "../../components/Field";

export function Checkbox({
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
