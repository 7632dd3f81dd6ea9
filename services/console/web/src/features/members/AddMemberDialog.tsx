import { useMutation } from "@connectrpc/connect-query";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useState } from "react";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../../components/Dialog";
import { SelectField, TextField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";
import { roleName } from "../../format";
import { keysWarning, roles } from "./rights";

/** Adds a member by email, with a name and a role. */
export function AddMemberDialog({ organizationId, open, onClose }: DialogProps & { organizationId: string }) {
  const invalidate = useInvalidate();
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
      { onSuccess: () => void invalidate(ConsoleService.method.listMembers).then(close) },
    );
  };
  return (
    <Dialog title="Add member" open={open} onClose={close}>
      <form className="stack" onSubmit={submit}>
        <TextField label="Email" required type="email" value={email} onChange={setEmail} autoFocus />
        <TextField label="Name" required maxLength={200} value={displayName} onChange={setDisplayName} />
        <SelectField
          label="Role"
          hint="Editors and above start runs and manage API keys; Admins manage members."
          value={String(role)}
          onChange={(value) => setRole(Number(value) as Role)}
        >
          {roles.map((r) => (
            <option key={r} value={r}>
              {roleName[r]}
            </option>
          ))}
        </SelectField>
        <p className="notice notice-info">{keysWarning}</p>
        <ErrorNotice error={add.error} />
        <DialogActions onCancel={close} label="Add member" busyLabel="Adding…" busy={add.isPending} />
      </form>
    </Dialog>
  );
}
