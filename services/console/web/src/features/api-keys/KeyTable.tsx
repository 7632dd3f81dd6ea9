import type { ApiKeyEntry } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { DataTable } from "../../components/DataTable";
import { Time } from "../../components/Time";
import { keyStateName } from "../../format";

/** The project's keys (or content tokens), with Revoke (or Remove, for a dead one) for Editors and above. */
export function KeyTable({
  keys,
  editor,
  onRevoke,
  secretLabel = "Key",
}: {
  keys: ApiKeyEntry[];
  editor: boolean;
  onRevoke: (entry: ApiKeyEntry) => void;
  /** The column of the secret's visible start: "Key", or "Token". */
  secretLabel?: string;
}) {
  // Rows keyed by the key's id; an entry without its key has nothing to show.
  const rows = keys.flatMap((entry) => (entry.key ? [{ id: entry.key.id, key: entry.key, entry }] : []));
  return (
    <DataTable
      rows={rows}
      columns={[
        { label: "Name", className: "cell-strong", cell: ({ key }) => key.name },
        { label: secretLabel, cell: ({ key }) => <code>{key.displayPrefix}…</code> },
        { label: "Created", cell: ({ key }) => <Time at={key.createdAt} /> },
        { label: "Last used", cell: ({ key }) => <Time at={key.lastUsedAt} missing="never" /> },
        { label: "Expires", cell: ({ key }) => <Time at={key.expiresAt} missing="never" /> },
        {
          label: "Creator",
          cell: ({ entry }) => (
            <span className="cell-lines">
              <span title={entry.creatorEmail}>{entry.creatorName || "unknown member"}</span>
              {entry.creatorEmail && <span className="muted small">{entry.creatorEmail}</span>}
            </span>
          ),
        },
        {
          label: "State",
          cell: ({ key }) => (
            <span className={`badge badge-${key.state === KeyState.ACTIVE ? "good" : "bad"}`}>
              {keyStateName[key.state]}
            </span>
          ),
        },
      ]}
      actions={
        editor
          ? ({ key, entry }) => {
              // A dead key can still be revoked, which takes it off this list.
              const verb = key.state === KeyState.ACTIVE ? "Revoke" : "Remove";
              return (
                <button
                  type="button"
                  className="button button-small button-danger"
                  onClick={() => onRevoke(entry)}
                  aria-label={`${verb} ${key.name}`}
                >
                  {verb}
                </button>
              );
            }
          : undefined
      }
    />
  );
}
