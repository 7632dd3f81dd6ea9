// What commands print: JSON for scripts (--json), aligned columns for people.
import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

/**
 * A message in the canonical protobuf JSON mapping (camelCase fields, RFC 3339 timestamps, enum
 * names, 64-bit integers as strings), with fields at their default value included so scripts
 * always find every field.
 */
export function messageJson<D extends DescMessage>(schema: D, message: MessageShape<D>): unknown {
  return toJson(schema, message, { alwaysEmitImplicit: true });
}

/** Pretty JSON text ending in a line break. */
export const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[header, ...rows].map(line).join("\n")}\n`;
}

/** Label/value lines, labels padded to one width. */
export function details(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return `${pairs.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}`.trimEnd()).join("\n")}\n`;
}

/** RFC 3339 UTC with milliseconds, or "-" when unset. */
export function time(timestamp: Timestamp | undefined): string {
  return timestamp ? timestampDate(timestamp).toISOString() : "-";
}
