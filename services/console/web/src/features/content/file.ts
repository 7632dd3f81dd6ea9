// The exported file's name, and handing it to the browser.
import type { FileFormat } from "@testrun/content-file";

/** `testrun-<project name as lower-case words joined by ->.yaml`. */
export function exportFileName(projectName: string, format: FileFormat): string {
  const words = projectName
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `testrun-${words || "project"}.${format}`;
}

/** Hands `text` to the browser as a file download. */
export function download(text: string, fileName: string, format: FileFormat): void {
  const blob = new Blob([text], { type: format === "json" ? "application/json" : "application/yaml" });
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has handed the file over.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
