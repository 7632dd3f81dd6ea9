import { type Member, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { roleName } from "../../format";
import { keysWarning, type Pending, pendingTitle } from "./rights";

/** Asks before removing a member, leaving, or a role change that costs keys or is one's own. */
export function ConfirmChangeDialog({
  pending,
  me,
  organizationName,
  failure,
  busy,
  onCancel,
  onConfirm,
}: {
  pending: Pending | undefined;
  me: Member;
  organizationName: string;
  failure: unknown;
  busy: boolean;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <Dialog title={pendingTitle(pending, organizationName)} open={pending !== undefined} onClose={onCancel}>
      {pending?.member.id === me.id && (
        <p className="notice notice-warning">
          {pending.kind === "leave"
            ? `You lose access to ${organizationName} and its projects at once, and this browser is signed out of it. API keys you created stop working for good. Only an Admin or Owner can add you again.`
            : `You become ${roleName[pending.kind === "role" ? pending.role : me.role]} at once. Only an Admin or Owner can change it back.`}
        </p>
      )}
      {(pending?.kind === "remove" ||
        (pending?.kind === "role" && pending.role === Role.VIEWER && pending.member.role >= Role.EDITOR)) && (
        <p className="notice notice-warning">{keysWarning}</p>
      )}
      <ErrorNotice error={failure} />
      <DialogActions
        onCancel={onCancel}
        label={
          pending?.kind === "leave"
            ? "Leave organization"
            : pending?.kind === "remove"
              ? "Remove member"
              : `Make ${roleName[pending?.role ?? Role.VIEWER]}`
        }
        busyLabel="Saving…"
        busy={busy}
        danger
        onConfirm={onConfirm}
      />
    </Dialog>
  );
}
