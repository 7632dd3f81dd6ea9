// Over a kept version shown read-only: which of how many it is, when and by whom it was stored, and
// the way back to the current one.
import { Link } from "react-router";
import { changedByName, type Versioned } from "../../components/Version";
import { OldTime } from "./OldTime";

export function VersionBanner({
  item,
  currentVersion,
  current,
}: {
  item: Versioned;
  currentVersion: number;
  /** The current version's page. */
  current: string;
}) {
  return (
    <div className="notice notice-warning version-banner" role="status">
      <p>
        You are looking at{" "}
        <strong>
          version {item.version} of {currentVersion}
        </strong>
        , from <OldTime item={item} />
        {changedByName(item.updatedBy) && <>, by {changedByName(item.updatedBy)}</>}. It is read-only.
      </p>
      <Link className="button button-small" to={current}>
        Go to the current version
      </Link>
    </div>
  );
}
