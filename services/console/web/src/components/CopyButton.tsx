import { useState } from "react";

/** Copies a text to the clipboard and says so. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="button button-small"
      onClick={async () => {
        await navigator.clipboard.writeText(text);
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? "Copied" : label}
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
