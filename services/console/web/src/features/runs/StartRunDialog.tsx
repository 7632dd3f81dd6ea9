// "Start run" (Editors and above): the environment (the project's default chosen), what to run (a
// test plan, tags, or test cases picked from a searchable checklist), an optional name. It previews
// the cost as the choice changes ("N tests · N credits · balance B") and opens the new run's page.
// "Run this test" (a test case's page) is the same dialog with the selection fixed to that case.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { ConsoleService, type RunSelectionSchema } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useDeferredValue, useId, useState } from "react";
import { Link, useNavigate } from "react-router";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../../components/Dialog";
import { Field, FieldSet } from "../../components/Field";
import { SelectField, TextField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";
import { plural } from "../../format";
import { CaseChecklist } from "./CaseChecklist";
import { RunCost } from "./RunCost";

import { toggled } from "./toggled";

type Mode = "plan" | "tags" | "cases";
const modes: { value: Mode; label: string }[] = [
  { value: "plan", label: "A test plan" },
  { value: "tags", label: "Tags" },
  { value: "cases", label: "Test cases" },
];

export function StartRunDialog({
  projectId,
  open,
  onClose,
  only,
}: DialogProps & {
  projectId: string;
  /** Runs just this test case: no choice of what to run. */
  only?: { id: string; name: string };
}) {
  const navigate = useNavigate();
  const invalidate = useInvalidate();
  const ids = useId();
  const [environmentId, setEnvironmentId] = useState("");
  const [mode, setMode] = useState<Mode>("plan");
  const [planId, setPlanId] = useState("");
  const [tags, setTags] = useState<string[]>([]);
  const [caseIds, setCaseIds] = useState<string[]>([]);
  const [search, setSearch] = useState("");
  const [name, setName] = useState("");
  const searched = useDeferredValue(search.trim());

  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId }, { enabled: open });
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId }, { enabled: open && !only });
  // Every case, for the tags to choose from; and the cases matching the search, for the checklist.
  const allCases = useQuery(
    ConsoleService.method.listTestCases,
    { projectId },
    { enabled: open && mode === "tags" },
  );
  const matching = useQuery(
    ConsoleService.method.listTestCases,
    { projectId, search: searched },
    { enabled: open && mode === "cases", placeholderData: keepPreviousData },
  );
  const start = useMutation(ConsoleService.method.startRun);

  const environmentChosen =
    environmentId ||
    environments.data?.environments.find((e) => e.isDefault)?.id ||
    environments.data?.environments[0]?.id ||
    "";
  const planChosen = planId || plans.data?.testPlans[0]?.id || "";
  const selection: MessageInitShape<typeof RunSelectionSchema> | undefined = only
    ? { selection: { case: "testCaseIds", value: { ids: [only.id] } } }
    : mode === "plan"
      ? planChosen
        ? { selection: { case: "testPlanId", value: planChosen } }
        : undefined
      : mode === "tags"
        ? tags.length > 0
          ? { selection: { case: "tags", value: { tags } } }
          : undefined
        : caseIds.length > 0
          ? { selection: { case: "testCaseIds", value: { ids: caseIds } } }
          : undefined;
  const preview = useQuery(
    ConsoleService.method.previewRun,
    { projectId, environmentId: environmentChosen, selection },
    {
      enabled: open && selection !== undefined && environmentChosen !== "",
      placeholderData: keepPreviousData,
    },
  );

  const close = () => {
    start.reset();
    setEnvironmentId("");
    setMode("plan");
    setPlanId("");
    setTags([]);
    setCaseIds([]);
    setSearch("");
    setName("");
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!selection) return;
    start.mutate(
      { projectId, environmentId: environmentChosen, selection, name: name.trim() },
      {
        onSuccess: ({ run }) => {
          // The project's runs and its balance (the run's credits are held).
          void invalidate(ConsoleService.method.listRuns, ConsoleService.method.getCredits);
          close();
          if (run) navigate(`/projects/${projectId}/runs/${run.id}`);
        },
      },
    );
  };
  const knownTags = [
    ...new Map(
      (allCases.data?.testCases ?? []).flatMap((c) => c.tags).map((t) => [t.toLowerCase(), t] as const),
    ).values(),
  ].sort((a, b) => a.localeCompare(b));
  const shown = preview.data;
  const nothingChosen =
    mode === "plan"
      ? "This project has no test plans yet."
      : mode === "tags"
        ? "Choose one tag or more."
        : "Choose one test case or more.";

  return (
    <Dialog title={only ? `Run ${only.name}` : "Start run"} open={open} onClose={close}>
      <form className="stack" onSubmit={submit}>
        <SelectField
          label="Environment"
          hint={
            // Only Editors and above see this dialog, and they may add environments.
            environments.data?.environments.length === 0 && (
              <>
                This project has no environment yet: add one on the{" "}
                <Link to={`/projects/${projectId}/environments`} onClick={close}>
                  Environments page
                </Link>
                .
              </>
            )
          }
          value={environmentChosen}
          onChange={setEnvironmentId}
          disabled={!environments.data}
        >
          {environments.data?.environments.map((env) => (
            <option key={env.id} value={env.id}>
              {env.name}
              {env.isDefault ? " (default)" : ""}
            </option>
          ))}
        </SelectField>
        <ErrorNotice error={environments.error} />

        {only ? (
          <p className="run-only">
            Runs this test case alone, as it is saved now{" "}
            <span className="muted">(whether it is enabled or not)</span>.
          </p>
        ) : (
          <FieldSet legend="What to run">
            <div className="choices">
              {modes.map((choice) => (
                <label key={choice.value} className="choice">
                  <input
                    type="radio"
                    name={`${ids}-mode`}
                    checked={mode === choice.value}
                    onChange={() => setMode(choice.value)}
                  />
                  {choice.label}
                </label>
              ))}
            </div>
          </FieldSet>
        )}

        {!only && mode === "plan" && (
          <Field label="Test plan" hint="Runs the plan's enabled test cases, in plan order.">
            {(control) => (
              <>
                <select
                  {...control}
                  className="input"
                  value={planChosen}
                  onChange={(e) => setPlanId(e.target.value)}
                  disabled={!plans.data || plans.data.testPlans.length === 0}
                >
                  {plans.data?.testPlans.map((plan) => (
                    <option key={plan.id} value={plan.id}>
                      {plan.name} ({plural(plan.testCaseCount, "test case")})
                    </option>
                  ))}
                </select>
                <ErrorNotice error={plans.error} />
              </>
            )}
          </Field>
        )}

        {!only && mode === "tags" && (
          <FieldSet legend="Tags" hint="Runs every enabled test case having any of them.">
            {allCases.isPending && <small>Loading tags…</small>}
            <ErrorNotice error={allCases.error} />
            {allCases.data && knownTags.length === 0 && <small>No test case has a tag yet.</small>}
            <div className="choices">
              {knownTags.map((tag) => (
                <label key={tag} className="choice chip-choice">
                  <input
                    type="checkbox"
                    checked={tags.includes(tag)}
                    onChange={() => setTags(toggled(tags, tag))}
                  />
                  {tag}
                </label>
              ))}
            </div>
          </FieldSet>
        )}

        {!only && mode === "cases" && (
          <CaseChecklist
            search={search}
            onSearch={setSearch}
            searched={searched}
            matching={matching}
            chosen={caseIds}
            onChoose={setCaseIds}
          />
        )}

        <TextField
          label="Name"
          optional
          maxLength={200}
          value={name}
          placeholder={shown?.defaultRunName}
          onChange={setName}
        />

        <RunCost
          chosen={selection !== undefined}
          nothingChosen={nothingChosen}
          error={preview.error}
          preview={shown}
          fetching={preview.isFetching}
        />
        <ErrorNotice error={start.error} />
        <DialogActions
          onCancel={close}
          label="Start run"
          busyLabel="Starting…"
          busy={start.isPending}
          disabled={!selection || !environmentChosen}
        />
      </form>
    </Dialog>
  );
}
