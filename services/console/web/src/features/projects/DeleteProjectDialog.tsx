// Deleting a project (Owners and Admins; the catalog decides): it asks for the project's name,
// typed, after saying what goes with it (docs/console.md, "Authoring").
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { Project } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../../components/Dialog";
import { TextField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";
import { WhatGoes } from "./WhatGoes";

/**
 * Says what deleting takes with it (with counts, once read) and asks for the name, typed exactly,
 * before the button works. Then the organization's project list, saying it was deleted.
 */
export function DeleteProjectDialog({
  project,
  organizationId,
  open,
  onClose,
}: DialogProps & { project: Project; organizationId: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const invalidate = useInvalidate();
  const remove = useMutation(ConsoleService.method.deleteProject);
  const [typed, setTyped] = useState("");
  const close = () => {
    setTyped("");
    remove.reset();
    onClose();
  };
  const confirmed = typed.trim() === project.name;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!confirmed) return;
    remove.mutate(
      { projectId: project.id },
      {
        onSuccess: () => {
          close();
          // Leave first: the project's own queries would now answer NOT_FOUND. Then forget them and
          // every project list, so no list shows the deleted project, not even while it reloads.
          navigate(`/orgs/${organizationId}`, { state: { deleted: project.name } });
          queryClient.removeQueries({
            predicate: (query) => {
              const key = JSON.stringify(query.queryKey);
              return key.includes(project.id) || key.includes('"methodName":"ListProjects"');
            },
          });
          void invalidate(ConsoleService.method.listProjects);
        },
      },
    );
  };
  return (
    <Dialog title={`Delete ${project.name}?`} open={open} onClose={close}>
      <form className="stack" onSubmit={submit}>
        {open && <WhatGoes projectId={project.id} />}
        <TextField
          label={`Type the project's name, ${project.name}, to confirm`}
          hint="This cannot be undone."
          required
          autoFocus
          autoComplete="off"
          spellCheck={false}
          value={typed}
          onChange={setTyped}
        />
        <ErrorNotice error={remove.error} />
        <DialogActions
          onCancel={close}
          label="Delete project"
          busyLabel="Deleting…"
          busy={remove.isPending}
          disabled={!confirmed}
          danger
        />
      </form>
    </Dialog>
  );
}
