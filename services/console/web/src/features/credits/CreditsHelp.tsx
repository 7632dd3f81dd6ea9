// Who grants credits and how: members cannot add any (not even an organization's owners), only an
// operator of the installation can, with testrunctl. Shown wherever a balance stops a run.

import { CodeBlock } from "../../components/CopyButton";
import { useSession } from "../../session";

/** "Credits are granted by an operator of this Testrun installation (…)", naming them when OPERATOR_CONTACT is set. */
export function GrantedBy() {
  const { operatorContact } = useSession();
  return (
    <>
      Credits are granted by an operator of this Testrun installation
      {operatorContact ? (
        <>
          {" "}
          (<strong>{operatorContact}</strong>)
        </>
      ) : null}
      , not by the organization's owners or admins.
    </>
  );
}

/** At a balance of 0: that no run can start, who can grant more and the command they run. */
export function NoCredits({ projectId }: { projectId: string }) {
  return (
    <div className="notice notice-warning no-credits" role="status">
      <p className="no-credits-title">No credits left: runs cannot start.</p>
      <p>
        <GrantedBy /> Ask one to run:
      </p>
      <CodeBlock
        label="Grant credits"
        code={`testrunctl credits grant <credits> --project ${projectId} --reason "<why>"`}
      />
    </div>
  );
}
