// An organization's members. Everyone sees them; Admins and Owners add, change roles and remove
// (the catalog decides: only an Owner gives or takes Owner).
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type Member, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { useParams } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { ErrorNotice } from "../../components/Dialog";
import { NotFound, QueryView } from "../../components/States";
import { Time } from "../../components/Time";
import { useInvalidate } from "../../components/useInvalidate";
import { canAdminister, roleName } from "../../format";
import { useSession } from "../../session";
import { AddMemberDialog } from "./AddMemberDialog";
import { ConfirmChangeDialog } from "./ConfirmChangeDialog";
import { type Pending, rowRights } from "./rights";

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
  const invalidate = useInvalidate();
  const changeRole = useMutation(ConsoleService.method.changeMemberRole);
  const remove = useMutation(ConsoleService.method.removeMember);

  if (!membership?.member || isNotFound(members.error)) return <NotFound what="Organization" />;
  const me = membership.member;
  const admin = canAdminister(me.role);
  const organizationName = membership.organization?.name ?? "the organization";
  // A change to oneself may change what the session says (a role, a membership): everything then.
  const doneWith = (member: Member) => ({
    onSuccess: () =>
      void (member.id === me.id ? invalidate() : invalidate(ConsoleService.method.listMembers)).then(() =>
        setPending(undefined),
      ),
  });
  const confirm = () => {
    if (!pending) return;
    if (pending.kind === "role")
      changeRole.mutate(
        { organizationId: orgId, memberId: pending.member.id, role: pending.role },
        doneWith(pending.member),
      );
    else remove.mutate({ organizationId: orgId, memberId: pending.member.id }, doneWith(pending.member));
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
                          else
                            changeRole.mutate(
                              { organizationId: orgId, memberId: member.id, role },
                              doneWith(member),
                            );
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
      <ConfirmChangeDialog
        pending={pending}
        me={me}
        organizationName={organizationName}
        failure={failure}
        busy={remove.isPending || changeRole.isPending}
        onCancel={cancel}
        onConfirm={confirm}
      />
    </>
  );
}
