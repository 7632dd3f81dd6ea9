// The exact time an old version was stored: "Nov 20, 2026, 10:00 AM" (a relative time would not
// tell two old versions apart).
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { absoluteTime, dateOf } from "../../format";

export function OldTime({ item }: { item: { updatedAt?: Timestamp } }) {
  const date = dateOf(item.updatedAt);
  return date ? <time dateTime={date.toISOString()}>{absoluteTime(date)}</time> : <>an unknown time</>;
}
