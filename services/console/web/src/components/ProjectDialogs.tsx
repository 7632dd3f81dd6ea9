// Creating, renaming and deleting a project (Owners and Admins; the catalog decides). Deleting asks
// for the project's name, typed, after saying what goes with it (docs/console.md, "Authoring").
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { Project } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { type FormEvent, useRef, useState } from "react";
import { useNavigate } from "react-router";
import { formErrors, type SaveAttempt } from "../api";
import { plural } from "../format";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "./Dialog";
import { Field, useFocusOnError } from "./Field";

const nameHint = "Unique in the organization (ignoring case), at most 200 characters.";
const descriptionHint = "What it tests, for the people who open it. At most 2000 characters.";

/** Name and description, as both the create and the edit dialog ask them. */
function ProjectFields({
  name,
  description,
  setName,
  setDescription,
  save,
}: {
  name: string;
  description: string;
  setName: (name: string) => void;
  setDescription: (description: string) => void;
  save: SaveAttempt;
}) {
  const errors = formErrors(save, { name, description });
  return (
    <>
      <Field label="Name" hint={nameHint} error={errors.at("name")} required>
        {(control) => (
          <input
            {...control}
            className="input"
            // biome-ignore lint/a11y/noAutofocus: only ever rendered as the first field of a dialog
            autoFocus
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        )}
      </Field>
      <Field label="Description" hint={descriptionHint} error={errors.at("description")} optional>
        {(control) => (
          <textarea
            {...control}
            className="input"
            rows={3}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
        )}
      </Field>
      {errors.other && <ErrorNotice error={save.error} />}
    </>
  );
}

export function CreateProjectDialog({
  organizationId,
  open,
  onClose,
}: DialogProps & { organizationId: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
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
          await queryClient.invalidateQueries();
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

export function EditProjectDialog({ project, open, onClose }: DialogProps & { project: Project }) {
  const queryClient = useQueryClient();
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
          await queryClient.invalidateQueries();
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
          void queryClient.invalidateQueries();
        },
      },
    );
  };
  return (
    <Dialog title={`Delete ${project.name}?`} open={open} onClose={close}>
      <form className="stack" onSubmit={submit}>
        {open && <WhatGoes projectId={project.id} />}
        <Field
          label={`Type the project's name, ${project.name}, to confirm`}
          hint="This cannot be undone."
          required
        >
          {(control) => (
            <input
              {...control}
              className="input"
              autoFocus
              autoComplete="off"
              spellCheck={false}
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
            />
          )}
        </Field>
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

/** What goes with a project, counted from what the person can read. */
function WhatGoes({ projectId }: { projectId: string }) {
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  const cases = useQuery(ConsoleService.method.listTestCases, { projectId });
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  const variables = useQuery(ConsoleService.method.listVariables, { projectId });
  const keys = useQuery(ConsoleService.method.listApiKeys, { projectId });
  const counted = (n: number | undefined, what: string, truncated = false) =>
    n === undefined ? `its ${what}s` : truncated ? `more than ${plural(n, what)}` : plural(n, what);
  const activeKeys = keys.data?.keys.filter((entry) => entry.key?.state === KeyState.ACTIVE).length;
  return (
    <ul className="consequences">
      <li>
        Deleted with it, for good: {counted(environments.data?.environments.length, "environment")},{" "}
        {counted(plans.data?.testPlans.length, "test plan")},{" "}
        {counted(cases.data?.testCases.length, "test case", cases.data?.truncated)} and{" "}
        {counted(variables.data?.variables.length, "variable")}.
      </li>
      <li>
        {activeKeys === undefined
          ? "Its API keys stop working at once: pipelines and agents using them get 401."
          : activeKeys === 1
            ? "Its 1 active API key stops working at once: pipelines and agents using it get 401."
            : `Its ${plural(activeKeys, "active API key")} stop working at once: pipelines and agents using them get 401.`}
      </li>
      <li>
        Its runs and credit ledger can no longer be opened by anyone, here or through the API. Tests of a run
        still in progress that have not started yet fail.
      </li>
    </ul>
  );
}
