import { useEffect, useState } from "react";

/** Copies a text to the clipboard and says so (or says to copy by hand where the browser refuses). */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [outcome, setOutcome] = useState<"copied" | "failed">();
  useEffect(() => {
    if (!outcome) return;
    const timer = setTimeout(() => setOutcome(undefined), 2500);
    return () => clearTimeout(timer);
  }, [outcome]);
  return (
    <button
      type="button"
      className="button button-small"
      onClick={async () => {
        // navigator.clipboard exists only in secure contexts (HTTPS or localhost).
        try {
          await navigator.clipboard.writeText(text);
          setOutcome("copied");
        } catch {
          setOutcome("failed");
        }
      }}
    >
      <span aria-live="polite">
        {outcome === "copied" ? "Copied" : outcome === "failed" ? "Select and copy it by hand" : label}
      </span>
    </button>
  );
}

/** A command or snippet with a copy button. */
export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <figure className="code-block" aria-label={label}>
      <pre>
        <code>{code}</code>
      </pre>
      <CopyButton text={code} />
    </figure>
  );
}
