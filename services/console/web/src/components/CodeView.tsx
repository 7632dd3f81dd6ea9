// A source file shown with syntax highlighting (CodeMirror 6 and its JavaScript/TypeScript
// language): read-only for those who may only read it, editable otherwise. The editor is made once
// per mount; a new `value` from outside (another file chosen, a save read back) replaces its text.
// It lives in a shadow root of its host: CodeMirror injects its styles at run time, which the
// console's Content-Security-Policy (style-src 'self', no inline style) refuses in the document,
// while a shadow root takes them as a constructed stylesheet, which the policy does not govern.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { javascript } from "@codemirror/lang-javascript";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers } from "@codemirror/view";
import { useEffect, useRef } from "react";

/** The console's look inside the shadow root (custom properties reach into it; rules do not). */
const theme = EditorView.theme({
  "&": { maxHeight: "32rem", fontSize: "0.85rem", backgroundColor: "var(--surface, #fff)" },
  ".cm-scroller": {
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
    overflow: "auto",
  },
  "&.cm-focused": { outline: "2px solid var(--focus, #1d4ed8)", outlineOffset: "-2px" },
  ".cm-gutters": { backgroundColor: "var(--bg, #f6f7f9)", color: "var(--muted, #4b5563)", border: "none" },
});

export function CodeView({
  value,
  onChange,
  readOnly,
  label,
  typescript = true,
}: {
  value: string;
  onChange?: (value: string) => void;
  readOnly: boolean;
  /** The accessible name of the text area ("Source of tests/login.spec.ts"). */
  label: string;
  typescript?: boolean;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const changed = useRef(onChange);
  changed.current = onChange;
  // Set while a new `value` from outside is applied: that is no edit of the person's to report.
  const applying = useRef(false);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the editor is made once per file kind; value changes are applied below.
  useEffect(() => {
    if (!host.current) return;
    const root = host.current.shadowRoot ?? host.current.attachShadow({ mode: "open" });
    const editor = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          javascript({ typescript }),
          syntaxHighlighting(defaultHighlightStyle),
          theme,
          EditorState.readOnly.of(readOnly),
          EditorView.editable.of(!readOnly),
          EditorView.contentAttributes.of({ "aria-label": label }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged && !applying.current) changed.current?.(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
  }, [readOnly, typescript, label]);

  useEffect(() => {
    const editor = view.current;
    if (!editor || editor.state.doc.toString() === value) return;
    applying.current = true;
    try {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    } finally {
      applying.current = false;
    }
  }, [value]);

  return <div className="code-view" ref={host} data-readonly={readOnly || undefined} />;
}
