import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { absoluteTime, dateOf, relativeTime } from "../format";

/** A time in words ("3 days ago"), exact on hover; `missing` when unset. */
export function Time({ at, missing = "—" }: { at: Timestamp | undefined; missing?: string }) {
  const date = dateOf(at);
  if (!date) return <span className="muted">{missing}</span>;
  return (
    <time dateTime={date.toISOString()} title={absoluteTime(date)}>
      {relativeTime(date)}
    </time>
  );
}
