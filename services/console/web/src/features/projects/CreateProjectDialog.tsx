// Creating a project (Owners and Admins; the catalog decides), then opening it.
import { useMutation } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { useNavigate } from "react-router";
import { Dialog, DialogActions, type DialogProps } from "../../components/Dialog";
import { useFocusOnError } from "../../components/Field";
import { useInvalidate } from "../../components/useInvalidate";
import { ProjectFields } from "./ProjectFields";

export function CreateProjectDialog({
  organizationId,
  open,
  onClose,
}: DialogProps & { organizationId: string }) {
  const navigate = useNavigate();
  const invalidate = useInvalidate();
  const create = useMutation(ConsoleService.method.createProject);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, create.error);
  const close = () => {
    setName("");
    setDescription("");
    create.reset();
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { organizationId, name, description },
      {
        onSuccess: async ({ project }) => {
          await invalidate(ConsoleService.method.listProjects);
          close();
          if (project) navigate(`/projects/${project.id}`);
        },
      },
    );
  };
  return (
    <Dialog title="New project" open={open} onClose={close}>
      <form ref={form} className="stack" onSubmit={submit} noValidate>
        <ProjectFields
          name={name}
          description={description}
          setName={setName}
          setDescription={setDescription}
          save={create}
        />
        <DialogActions
          onCancel={close}
          label="Create project"
          busyLabel="Creating…"
          busy={create.isPending}
        />
      </form>
    </Dialog>
  );
}
