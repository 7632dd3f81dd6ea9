// Renaming a project, or changing its description (Owners and Admins; the catalog decides).
import { useMutation } from "@connectrpc/connect-query";
import type { Project } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { Dialog, DialogActions, type DialogProps } from "../../components/Dialog";
import { useFocusOnError } from "../../components/Field";
import { useInvalidate } from "../../components/useInvalidate";
import { ProjectFields } from "./ProjectFields";

export function EditProjectDialog({ project, open, onClose }: DialogProps & { project: Project }) {
  const invalidate = useInvalidate();
  const update = useMutation(ConsoleService.method.updateProject);
  const [name, setName] = useState(project.name);
  const [description, setDescription] = useState(project.description);
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, update.error);
  const close = () => {
    update.reset();
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate(
      { projectId: project.id, name, description },
      {
        onSuccess: async () => {
          // The project's page and every list that names it.
          await invalidate(ConsoleService.method.getProject, ConsoleService.method.listProjects);
          close();
        },
      },
    );
  };
  return (
    <Dialog title="Rename project" open={open} onClose={close}>
      <form ref={form} className="stack" onSubmit={submit} noValidate>
        <ProjectFields
          name={name}
          description={description}
          setName={setName}
          setDescription={setDescription}
          save={update}
        />
        <DialogActions onCancel={close} label="Save" busyLabel="Saving…" busy={update.isPending} />
      </form>
    </Dialog>
  );
}
