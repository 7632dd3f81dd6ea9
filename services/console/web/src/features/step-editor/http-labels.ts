// What the HTTP step's form shows beside its fields: sizes as people read them, the body choices,
// and a section's count.
import type { HttpDraft } from "./http-step";

/** A size as people read it: "512 bytes", "12.5 KiB", "1.20 MiB". */
export const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`
      : `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;

export const bodyChoices: { value: HttpDraft["body"]; label: string }[] = [
  { value: "none", label: "None" },
  { value: "json", label: "JSON" },
  { value: "raw", label: "Text as written" },
];

/** A folded section's count: none when there is nothing. */
export const count = (n: number) => (n === 0 ? undefined : String(n));
