// What the editor says about a field, and what every kind of step's form is given (step-kinds.tsx).

/** What the editor says about one field: its error (a save was refused) and warning. */
export interface Said {
  error?: string | undefined;
  warning?: string | undefined;
}

/** What every kind's editor is given (step-kinds.tsx). */
export interface KindEditorProps<Draft> {
  draft: Draft;
  onChange: (draft: Draft) => void;
  /** The messages of one of the step's fields (`request.path`, `request.headers#1`). */
  said: (field: string) => Said;
  /** Whether a field starting with one of these has a message: its section opens. */
  attention: (...prefixes: string[]) => boolean;
}

/** Changes a copy of the draft: the draft is never changed in place (React compares it). */
export type Change<Draft> = (edit: (copy: Draft) => void) => void;

export function changer<Draft>(draft: Draft, onChange: (draft: Draft) => void): Change<Draft> {
  return (edit) => {
    const copy = structuredClone(draft);
    edit(copy);
    onChange(copy);
  };
}

/** A field's onChange that puts its value at one key of the draft: `onChange={set("path")}`. */
export function setter<Draft>(change: Change<Draft>) {
  return <Key extends keyof Draft>(key: Key) =>
    (value: Draft[Key]) =>
      change((copy) => {
        copy[key] = value;
      });
}
