// A part of a step's form that folds away when empty but opens by itself while it has something to
// say (an error or a warning inside).
import { type ReactNode, useState } from "react";

/** A part of a step that folds; open when first shown with content, and whenever it has a message. */
export function Section({
  title,
  count,
  initiallyOpen,
  attention,
  children,
}: {
  title: string;
  /** Shown after the title while folded: how many entries, or which body. */
  count?: string;
  initiallyOpen: boolean;
  /** Something inside has an error or a warning: open, so it is seen (and focus can reach it). */
  attention: boolean;
  children: ReactNode;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    <details
      className="editor-section"
      open={open || attention}
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary>
        <span className="editor-section-title">{title}</span>
        {count && <span className="editor-section-count">{count}</span>}
        {attention && <span className="editor-section-flag">needs a look</span>}
      </summary>
      <div className="editor-section-body">{children}</div>
    </details>
  );
}
