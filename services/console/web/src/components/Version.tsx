// Which version of a test case or plan a page shows, who stored it and when (catalog.proto,
// TestCase.version): "Version 4 · changed by Ana (ana@example.com), 3 days ago".
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { changedByName } from "@testrun/content-file";
import type { ChangedBy } from "@testrun/gen/testrun/common/v1/actor_pb";
import { Time } from "./Time";

/**
 * "Ana (ana@example.com)", "operator alice", "an operator"; "" when nobody was recorded: the one
 * naming the catalog's conflict messages use too (@testrun/content-file).
 */
export { changedByName };

/** What the line and the banner need of a test case or plan. */
export interface Versioned {
  version: number;
  updatedBy?: ChangedBy;
  updatedAt?: Timestamp;
}

/** "changed by Ana (ana@example.com), 3 days ago", or "changed 3 days ago" when nobody was recorded. */
export function ChangedByAndWhen({ item }: { item: Versioned }) {
  const who = changedByName(item.updatedBy);
  return (
    <>
      changed {who ? `by ${who}, ` : ""}
      <Time at={item.updatedAt} />
    </>
  );
}

/** "Version 4 · changed by Ana (ana@example.com), 3 days ago". */
export function VersionLine({ item }: { item: Versioned }) {
  return (
    <p className="muted version-line">
      Version {item.version} · <ChangedByAndWhen item={item} />
    </p>
  );
}
