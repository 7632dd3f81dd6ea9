// The test plan editor (Editors and above; the catalog decides): name, description, retries (none:
// each test case's own; 0 to 3: replacing them in a run of the plan), and the test cases in run order, picked from a searchable list, moved by buttons or by Alt+↑/↓ on a focused
// row, removed. One form creates a plan and edits one (docs/console.md, "Authoring: test plans").
// Leaving with unsaved changes asks first; a save is made on the version loaded, and when someone
// else saved since, the conflict dialog offers to copy the draft or reload ("Two people editing").
import { useMutation } from "@connectrpc/connect-query";
import type { TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { Link, useNavigate } from "react-router";
import { editConflictOf, formErrors } from "../../api";
import { DialogActions, ErrorNotice } from "../../components/Dialog";
import { useFocusOnError } from "../../components/Field";
import { SelectField, TextAreaField, TextField } from "../../components/Inputs";
import { useUnsavedChanges } from "../../components/UnsavedChanges";
import { useInvalidate } from "../../components/useInvalidate";
import { VersionLine } from "../../components/Version";
import { useProject } from "../../project";
import { retriesHint, retriesLabel, retryCounts } from "../test-cases/retries";
import { ConflictNotice } from "../versions/ConflictNotice";
import { EditConflictDialog } from "../versions/EditConflictDialog";
import { CasePicker } from "./CasePicker";
import { PlanCases } from "./PlanCases";
import { caseNotFound, disabledRule, planAsText } from "./plan-draft";
import { usePlanCases } from "./usePlanCases";

export function PlanEditor({
  plan: opened,
  cases = [],
  onReload,
}: {
  plan?: TestPlan;
  cases?: TestCase[];
  onReload?: () => Promise<void>;
}) {
  const { projectId, path } = useProject();
  // The version edited, as it was read: a save is made on it, and goes on from the one it stores.
  const [plan, setPlan] = useState(opened);
  const navigate = useNavigate();
  const invalidate = useInvalidate();
  const create = useMutation(ConsoleService.method.createTestPlan);
  const update = useMutation(ConsoleService.method.updateTestPlan);
  const save = plan ? update : create;
  const [name, setName] = useState(plan?.name ?? "");
  const [description, setDescription] = useState(plan?.description ?? "");
  // "" when the plan sets none (each test case's own apply), else "0" to "3".
  const [retries, setRetries] = useState(plan?.retries === undefined ? "" : String(plan.retries));
  const retriesValue = retries === "" ? undefined : Number(retries);
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, save.error);
  const picked = usePlanCases(cases);
  const { chosen } = picked;
  const conflict = editConflictOf(save.error);
  const [conflictOpen, setConflictOpen] = useState(false);
  const unsaved =
    name !== (plan?.name ?? "") ||
    description !== (plan?.description ?? "") ||
    retriesValue !== plan?.retries ||
    chosen.map((c) => c.id).join(" ") !== cases.map((c) => c.id).join(" ");
  const guard = useUnsavedChanges(unsaved && !save.isPending, plan ? `“${plan.name}”` : "this new test plan");

  // The catalog names the list `test_case_ids` in CreateTestPlan and `test_case_ids.ids` in
  // UpdateTestPlan (where it is a TestCaseIdList).
  const casesField = plan ? "test_case_ids.ids" : "test_case_ids";
  // Likewise `retries`, and `retries.retries` inside UpdateTestPlan's PlanRetries.
  const retriesField = plan ? "retries.retries" : "retries";
  const errors = formErrors(save, {
    name,
    description,
    [casesField]: chosen.map((c) => c.id),
    [retriesField]: retriesValue,
  });
  const missingCase = caseNotFound(save.error, chosen);

  // A refusal may come from something changed elsewhere (a test case deleted): the picker reads
  // the project's cases again. The form keeps what was typed and chosen.
  const refresh = () => void invalidate(ConsoleService.method.listTestCases);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const testCaseIds = chosen.map((c) => c.id);
    const done = async (saved: TestPlan | undefined) => {
      setPlan(saved);
      guard.leaveFreely();
      // The plan's page (where the editor goes) and the list show what was saved.
      await invalidate(ConsoleService.method.getTestPlan, ConsoleService.method.listTestPlans);
      const said = saved?.name ?? name;
      navigate(path(`/test-plans/${saved?.id ?? plan?.id ?? ""}`), {
        state: { saved: plan ? `Test plan ${said} saved.` : `Test plan ${said} created.` },
      });
    };
    if (plan)
      update.mutate(
        {
          projectId,
          testPlanId: plan.id,
          name,
          description,
          testCaseIds: { ids: testCaseIds },
          // Without a value, PlanRetries clears the plan's: each test case's own apply again.
          retries: retriesValue === undefined ? {} : { retries: retriesValue },
          expectedVersion: plan.version,
        },
        {
          onSuccess: (answer) => done(answer.testPlan),
          onError: (error) => {
            // Saved by someone else since this version was read: the draft stays as it is.
            if (editConflictOf(error)) setConflictOpen(true);
            refresh();
          },
        },
      );
    else
      create.mutate(
        { projectId, name, description, testCaseIds, retries: retriesValue },
        { onSuccess: (answer) => done(answer.testPlan), onError: refresh },
      );
  };
  const back = plan ? path(`/test-plans/${plan.id}`) : path("/test-plans");

  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-plans")}>Test plans</Link>
      </p>
      <h1>{plan ? `Edit ${plan.name}` : "New test plan"}</h1>
      {plan && <VersionLine item={plan} />}
      <p className="lead">
        A named list of test cases that run together, in the order given here. {disabledRule}
      </p>
      <form ref={form} className="plan-form" onSubmit={submit} noValidate>
        <div className="stack plan-fields">
          <TextField
            label="Name"
            hint="E.g. Smoke or Checkout. At most 200 characters; pipelines can start the plan by it."
            error={errors.at("name")}
            required
            // The first field of a page whose only purpose is this form.
            autoFocus={!plan}
            value={name}
            onChange={setName}
          />
          <TextAreaField
            label="Description"
            hint="What the plan checks and when to run it. At most 2000 characters."
            error={errors.at("description")}
            optional
            rows={3}
            value={description}
            onChange={setDescription}
          />
          <SelectField
            label="Retries"
            hint={`${retriesHint} Set here, it replaces each test case's own in a run of the plan.`}
            error={errors.at(retriesField)}
            value={retries}
            onChange={setRetries}
          >
            <option value="">Each test case's own</option>
            {retryCounts.map((count) => (
              <option key={count} value={String(count)}>
                {retriesLabel(count)}
              </option>
            ))}
          </SelectField>
        </div>

        <div className="plan-columns">
          <PlanCases cases={picked} error={errors.at(casesField)} gone={missingCase?.testCase} />
          <CasePicker
            projectId={projectId}
            chosen={chosen}
            full={picked.full}
            searchRef={picked.search}
            onToggle={picked.toggle}
            onAddAll={picked.addAll}
          />
        </div>

        {errors.other && !missingCase && !conflict && <ErrorNotice error={save.error} />}
        {conflict && <ConflictNotice conflict={conflict} onOpen={() => setConflictOpen(true)} />}
        <DialogActions
          onCancel={() => navigate(back)}
          label={plan ? "Save test plan" : "Create test plan"}
          busyLabel="Saving…"
          busy={save.isPending}
        />
      </form>
      {guard.prompt}
      {onReload && (
        <EditConflictDialog
          conflict={conflictOpen ? conflict : undefined}
          what="test plan"
          mine={planAsText(name, description, chosen, retriesValue)}
          onReload={onReload}
          onClose={() => setConflictOpen(false)}
        />
      )}
    </>
  );
}
