// Who stored the version a save or delete was refused for (the catalog's EditConflict), and when.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { EditConflict } from "@testrun/gen/testrun/common/v1/errors_pb";
import { changedByName } from "../../components/Version";

const clock = new Intl.DateTimeFormat("en", { timeStyle: "short" });
const dayAndClock = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" });

/** "at 10:02 AM" today, "on Nov 24, 2026, 10:02 AM" before. */
function When({ conflict }: { conflict: EditConflict }) {
  if (!conflict.changedAt) return <>at an unknown time</>;
  const date = timestampDate(conflict.changedAt);
  const today = date.toDateString() === new Date().toDateString();
  return (
    <>
      {today ? "at " : "on "}
      <time dateTime={date.toISOString()}>{(today ? clock : dayAndClock).format(date)}</time>
    </>
  );
}

/** "Ana (ana@example.com) saved version 5 at 10:02 AM" ("Someone" when nobody was recorded). */
export function WhoSaved({ conflict }: { conflict: EditConflict }) {
  return (
    <>
      <strong>{changedByName(conflict.changedBy) || "Someone"}</strong> saved version{" "}
      {conflict.currentVersion} <When conflict={conflict} />
    </>
  );
}
