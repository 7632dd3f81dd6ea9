// An organization's members. Everyone sees them; Admins and Owners add, change roles and remove
// (the catalog decides: only an Owner gives or takes Owner).
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type Member, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useState } from "react";
import { useParams } from "react-router";
import { isNotFound } from "../api";
import { DataTable } from "../components/DataTable";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../components/Dialog";
import { Field } from "../components/Field";
import { NotFound, QueryView } from "../components/States";
import { Time } from "../components/Time";
import { canAdminister, roleName } from "../format";
import { useSession } from "../session";

const roles = [Role.VIEWER, Role.EDITOR, Role.ADMIN, Role.OWNER];
const keysWarning =
  "Removing or demoting an Editor kills the API keys they created, for good: pipelines using them will get 401/403. Regaining the role does not bring those keys back.";

type Pending =
  | { kind: "remove"; member: Member }
  | { kind: "leave"; member: Member }
  | { kind: "role"; member: Member; role: Role };

/**
 * What the signed-in member may do to each row, by the catalog's rules (roles.ts there): Admins and
 * Owners change roles and remove, only an Owner gives, takes or changes Owner, anyone may leave,
 * and nobody leaves the organization without an active Owner. The catalog refuses the rest anyway.
 */
function rowRights(me: Member, members: readonly Member[]) {
  const owners = members.filter((m) => m.role === Role.OWNER).length;
  /** The organization's only active Owner (ListMembers answers every active member). */
  const soleOwner = (member: Member) => member.role === Role.OWNER && owners === 1;
  const admin = canAdminister(me.role);
  const ownerActs = me.role === Role.OWNER;
  return {
    soleOwner,
    roleChoices: (member: Member): Role[] => {
      if (!admin || soleOwner(member) || (member.role === Role.OWNER && !ownerActs)) return [];
      return ownerActs ? roles : roles.filter((role) => role !== Role.OWNER);
    },
    mayRemove: (member: Member) =>
      member.id === me.id
        ? !soleOwner(member)
        : admin && (member.role !== Role.OWNER || ownerActs) && !soleOwner(member),
  };
}

export function Members() {
  const { orgId = "" } = useParams();
  const session = useSession();
  const membership = session.memberships.find((m) => m.organization?.id === orgId);
  const members = useQuery(
    ConsoleService.method.listMembers,
    { organizationId: orgId },
    { enabled: !!membership },
  );
  const [adding, setAdding] = useState(false);
  const [pending, setPending] = useState<Pending>();
  const queryClient = useQueryClient();
  const changeRole = useMutation(ConsoleService.method.changeMemberRole);
  const remove = useMutation(ConsoleService.method.removeMember);

  if (!membership?.member || isNotFound(members.error)) return <NotFound what="Organization" />;
  const me = membership.member;
  const admin = canAdminister(me.role);
  const organizationName = membership.organization?.name ?? "the organization";
  const done = { onSuccess: () => void queryClient.invalidateQueries().then(() => setPending(undefined)) };
  const confirm = () => {
    if (!pending) return;
    if (pending.kind === "role")
      changeRole.mutate({ organizationId: orgId, memberId: pending.member.id, role: pending.role }, done);
    else remove.mutate({ organizationId: orgId, memberId: pending.member.id }, done);
  };
  const failure = remove.error ?? changeRole.error;
  const cancel = () => {
    remove.reset();
    changeRole.reset();
    setPending(undefined);
  };

  return (
    <>
      <p className="eyebrow">{organizationName}</p>
      <div className="page-head">
        <h1>Members</h1>
        {admin && (
          <button type="button" className="button button-primary" onClick={() => setAdding(true)}>
            Add member
          </button>
        )}
      </div>
      <p className="lead">Every member of the organization is a member of all its projects.</p>
      <QueryView query={members} what="members">
        {(data) => {
          const rights = rowRights(me, data.members);
          return (
            <DataTable
              rows={data.members}
              columns={[
                {
                  label: "Name",
                  className: "cell-strong",
                  cell: (member) => (
                    <>
                      {member.displayName}
                      {member.id === me.id && <span className="muted"> (you)</span>}
                    </>
                  ),
                },
                { label: "Email", cell: (member) => member.email },
                {
                  label: "Role",
                  cell: (member) => {
                    const choices = rights.roleChoices(member);
                    if (choices.length === 0)
                      return (
                        <span className="cell-lines">
                          {roleName[member.role]}
                          {member.id === me.id && rights.soleOwner(member) && (
                            <span className="muted small">
                              The only Owner: make another member Owner before changing this role or leaving.
                            </span>
                          )}
                        </span>
                      );
                    return (
                      <select
                        className="input input-small"
                        aria-label={`Role of ${member.displayName}`}
                        value={member.role}
                        disabled={changeRole.isPending}
                        onChange={(e) => {
                          const role = Number(e.target.value) as Role;
                          const losesKeys = role === Role.VIEWER && member.role >= Role.EDITOR;
                          if (losesKeys || member.id === me.id) setPending({ kind: "role", member, role });
                          else changeRole.mutate({ organizationId: orgId, memberId: member.id, role }, done);
                        }}
                      >
                        {choices.map((role) => (
                          <option key={role} value={role}>
                            {roleName[role]}
                          </option>
                        ))}
                      </select>
                    );
                  },
                },
                { label: "Member since", cell: (member) => <Time at={member.createdAt} /> },
              ]}
              actions={(member) =>
                rights.mayRemove(member) &&
                (member.id === me.id ? (
                  <button
                    type="button"
                    className="button button-small button-danger"
                    onClick={() => setPending({ kind: "leave", member })}
                  >
                    Leave organization
                  </button>
                ) : (
                  <button
                    type="button"
                    className="button button-small button-danger"
                    aria-label={`Remove ${member.displayName}`}
                    onClick={() => setPending({ kind: "remove", member })}
                  >
                    Remove
                  </button>
                ))
              }
            />
          );
        }}
      </QueryView>
      {!pending && <ErrorNotice error={changeRole.error} />}
      <AddMemberDialog organizationId={orgId} open={adding} onClose={() => setAdding(false)} />
      <Dialog title={pendingTitle(pending, organizationName)} open={pending !== undefined} onClose={cancel}>
        {pending?.member.id === me.id && (
          <p className="notice notice-warning">
            {pending.kind === "leave"
              ? `You lose access to ${organizationName} and its projects at once, and this browser is signed out of it. API keys you created stop working for good. Only an Admin or Owner can add you again.`
              : `You become ${roleName[pending.kind === "role" ? pending.role : me.role]} at once. Only an Admin or Owner can change it back.`}
          </p>
        )}
        {(pending?.kind === "remove" ||
          (pending?.kind === "role" &&
            pending.role === Role.VIEWER &&
            pending.member.role >= Role.EDITOR)) && <p className="notice notice-warning">{keysWarning}</p>}
        <ErrorNotice error={failure} />
        <DialogActions
          onCancel={cancel}
          label={
            pending?.kind === "leave"
              ? "Leave organization"
              : pending?.kind === "remove"
                ? "Remove member"
                : `Make ${roleName[pending?.role ?? Role.VIEWER]}`
          }
          busyLabel="Saving…"
          busy={remove.isPending || changeRole.isPending}
          danger
          onConfirm={confirm}
        />
      </Dialog>
    </>
  );
}

function pendingTitle(pending: Pending | undefined, organizationName: string): string {
  if (!pending) return "";
  if (pending.kind === "leave") return `Leave ${organizationName}?`;
  if (pending.kind === "remove") return `Remove ${pending.member.displayName}?`;
  const role = roleName[pending.role];
  return `Make ${pending.member.displayName} ${/^[AEIOU]/.test(role) ? "an" : "a"} ${role}?`;
}

function AddMemberDialog({ organizationId, open, onClose }: DialogProps & { organizationId: string }) {
  const queryClient = useQueryClient();
  const add = useMutation(ConsoleService.method.addMember);
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [role, setRole] = useState(Role.EDITOR);
  const close = () => {
    add.reset();
    setEmail("");
    setDisplayName("");
    setRole(Role.EDITOR);
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate(
      { organizationId, email, displayName, role },
      { onSuccess: () => void queryClient.invalidateQueries().then(close) },
    );
  };
  return (
    <Dialog title="Add member" open={open} onClose={close}>
      <form className="stack" onSubmit={submit}>
        <Field label="Email" required>
          {(control) => (
            <input
              {...control}
              className="input"
              type="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              autoFocus
            />
          )}
        </Field>
        <Field label="Name" required>
          {(control) => (
            <input
              {...control}
              className="input"
              maxLength={200}
              value={displayName}
              onChange={(e) => setDisplayName(e.target.value)}
            />
          )}
        </Field>
        <Field label="Role" hint="Editors and above start runs and manage API keys; Admins manage members.">
          {(control) => (
            <select
              {...control}
              className="input"
              value={role}
              onChange={(e) => setRole(Number(e.target.value) as Role)}
            >
              {roles.map((r) => (
                <option key={r} value={r}>
                  {roleName[r]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <p className="notice notice-info">{keysWarning}</p>
        <ErrorNotice error={add.error} />
        <DialogActions onCancel={close} label="Add member" busyLabel="Adding…" busy={add.isPending} />
      </form>
    </Dialog>
  );
}
