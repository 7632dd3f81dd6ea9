// The field primitives: a Field with its one control, for the forms that used to write the same
// 15-line `<Field>{(control) => <input {...control} … onChange={(e) => set(e.target.value)} />}</Field>`
// block. How to use:
//
//   <TextField label="Name" hint="…" error={errors.at("name")} required autoFocus value={name} onChange={setName} />
//   <CodeField label="URL" inputMode="url" value={url} onChange={setUrl} />      // monospace, no autocorrect
//   <NumberField label="Timeout (ms)" optional placeholder="10000" value={draft.timeoutMs}
//     onChange={(v) => change((d) => { d.timeoutMs = v; })} />                   // a number typed as text
//   <TextAreaField label="Body" rows={6} value={body} onChange={setBody} />       // code: className="input input-code"
//   <SelectField label="Role" value={role} onChange={(v) => setRole(Number(v))}>
//     <option value="1">Viewer</option>…
//   </SelectField>
//
// The Field props (label, hint, error, warning, required, optional) go to the Field; every other prop
// goes to the control (className defaults to "input", or "input input-code" for CodeField and
// NumberField). The label, id and aria-describedby/aria-invalid wiring are Field's, so a form moved
// onto these renders the same markup. onChange gets the new value, not the event. A control that is
// not one input (a datalist beside it, a copy button) keeps writing <Field> with a render function.
import type { InputHTMLAttributes, ReactNode, SelectHTMLAttributes, TextareaHTMLAttributes } from "react";
import { Field, type FieldProps } from "./Field";

type Labels = Omit<FieldProps, "children">;
/** The control's own attributes: all but those the field primitive sets. */
type Own<A> = Omit<A, "id" | "value" | "onChange" | "children" | "required">;

export type TextFieldProps = Labels &
  Own<InputHTMLAttributes<HTMLInputElement>> & {
    value: string;
    onChange: (value: string) => void;
  };

/** Splits a primitive's props into the Field's and the control's. */
function split<T extends Labels>({ label, hint, error, warning, required, optional, ...control }: T) {
  return { field: { label, hint, error, warning, required, optional }, control };
}

/** A one-line text input. */
export function TextField(props: TextFieldProps) {
  const { field, control } = split(props);
  const { value, onChange, className = "input", ...input } = control;
  return (
    <Field {...field}>
      {(wired) => (
        <input
          {...wired}
          className={className}
          {...input}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/** Text that is code, a URL or a name a machine reads: monospace, not capitalised or spell-checked. */
export function CodeField({ className = "input input-code", ...props }: TextFieldProps) {
  return <TextField autoCapitalize="off" spellCheck={false} className={className} {...props} />;
}

/** A whole number typed as text (the draft keeps what was typed; the save checks it). */
export function NumberField({ className = "input input-code", ...props }: TextFieldProps) {
  return <TextField inputMode="numeric" className={className} {...props} />;
}

export type TextAreaFieldProps = Labels &
  Own<TextareaHTMLAttributes<HTMLTextAreaElement>> & {
    value: string;
    onChange: (value: string) => void;
  };

/** Several lines of text (className="input input-code" for code, with spellCheck={false}). */
export function TextAreaField(props: TextAreaFieldProps) {
  const { field, control } = split(props);
  const { value, onChange, className = "input", ...textarea } = control;
  return (
    <Field {...field}>
      {(wired) => (
        <textarea
          {...wired}
          className={className}
          {...textarea}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

export type SelectFieldProps<V extends string> = Labels &
  Own<SelectHTMLAttributes<HTMLSelectElement>> & {
    value: V;
    /** The chosen option's value (as the option's `value` gave it). */
    onChange: (value: V) => void;
    /** The <option>s. */
    children: ReactNode;
  };

/** A choice among options, given as <option> children. */
export function SelectField<V extends string = string>(props: SelectFieldProps<V>) {
  const { field, control } = split(props);
  const { value, onChange, children, className = "input", ...select } = control;
  return (
    <Field {...field}>
      {(wired) => (
        <select
          {...wired}
          className={className}
          {...select}
          value={value}
          onChange={(e) => onChange(e.target.value as V)}
        >
          {children}
        </select>
      )}
    </Field>
  );
}
