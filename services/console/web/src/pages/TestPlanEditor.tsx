// The test plan editor (Editors and above; the catalog decides): name, description, and the test
// cases in run order, picked from a searchable list, moved by buttons or by Alt+↑/↓ on a focused
// row, removed. One form creates a plan and edits one (docs/console.md, "Authoring: test plans").
// Leaving with unsaved changes asks first; a save is made on the version loaded, and when someone
// else saved since, the conflict dialog offers to copy the draft or reload ("Two people editing").
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData, useQueryClient } from "@tanstack/react-query";
import type { TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import {
  type FormEvent,
  type KeyboardEvent,
  type RefObject,
  useDeferredValue,
  useEffect,
  useId,
  useRef,
  useState,
} from "react";
import { Link, useNavigate, useParams } from "react-router";
import { editConflictOf, errorOf, formErrors, isNotFound } from "../api";
import { DialogActions, ErrorNotice } from "../components/Dialog";
import { EditConflictDialog, WhoSaved } from "../components/EditConflictDialog";
import { Field, useFocusOnError } from "../components/Field";
import { Empty, Failed, Loading, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { VersionLine } from "../components/Version";
import { useUnsavedChanges } from "../components/UnsavedChanges";
import { plural } from "../format";
import { useProject } from "../project";

/** The most test cases a plan holds (CatalogService.CreateTestPlan): the most one run holds. */
const planBound = 500;

/** What the plan's runs do with a disabled test case (catalog.proto, TestCase.enabled). */
const disabledRule = "Disabled test cases stay in the plan, but its runs leave them out.";

export function NewTestPlan() {
  const { project, editor, path } = useProject();
  if (isNotFound(project.error)) return <NotFound what="Project" />;
  // Only until first read: a background refetch that fails must not take the form away.
  if (!project.data) return <QueryView query={project} what="the project" />;
  if (!editor) return <ReadOnly back={path("/test-plans")} to="the test plans" />;
  return <PlanEditor />;
}

export function EditTestPlan() {
  const { testPlanId = "" } = useParams();
  const { projectId, project, editor, path } = useProject();
  const plan = useQuery(ConsoleService.method.getTestPlan, { projectId, testPlanId });
  // Bumped by "Reload the current version": the editor starts again from the plan as read now.
  const [generation, setGeneration] = useState(0);
  if (isNotFound(project.error) || isNotFound(plan.error)) return <NotFound what="Test plan" />;
  if (!project.data) return <QueryView query={project} what="the project" />;
  if (!editor) return <ReadOnly back={path(`/test-plans/${testPlanId}`)} to="the test plan" />;
  if (!plan.data) return <QueryView query={plan} what="the test plan" />;
  const reload = async () => {
    const { error } = await plan.refetch();
    // Deleted since: this page says so once the editor is gone.
    if (error && !isNotFound(error)) throw error;
    setGeneration((n) => n + 1);
  };
  // Keyed: another plan's editor (or a reload) starts from that plan, and a background refetch
  // does not undo edits.
  return (
    <PlanEditor
      key={`${testPlanId}:${generation}`}
      plan={plan.data.testPlan}
      cases={plan.data.testCases}
      onReload={reload}
    />
  );
}

/** A Viewer who opened an editor's address: what they may do instead. */
function ReadOnly({ back, to }: { back: string; to: string }) {
  return (
    <section className="narrow-page" aria-labelledby="read-only-title">
      <h1 id="read-only-title">Viewers cannot change test plans</h1>
      <p>Editors and above create and change them; ask one of them, or an admin for the Editor role.</p>
      <p>
        <Link to={back}>Back to {to}</Link>
      </p>
    </section>
  );
}

/** Where focus goes once the list has changed: an element to put it back on, or a row. */
type FocusAfter = { element: HTMLElement; id: string } | { row: string } | { search: true };

function PlanEditor({
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
  const queryClient = useQueryClient();
  const ids = useId();
  const create = useMutation(ConsoleService.method.createTestPlan);
  const update = useMutation(ConsoleService.method.updateTestPlan);
  const save = plan ? update : create;
  const [name, setName] = useState(plan?.name ?? "");
  const [description, setDescription] = useState(plan?.description ?? "");
  const [chosen, setChosen] = useState<TestCase[]>(cases);
  const [announcement, setAnnouncement] = useState("");
  const form = useRef<HTMLFormElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const search = useRef<HTMLInputElement>(null);
  const focusAfter = useRef<FocusAfter | null>(null);
  useFocusOnError(form, save.error);
  const conflict = editConflictOf(save.error);
  const [conflictOpen, setConflictOpen] = useState(false);
  const unsaved =
    name !== (plan?.name ?? "") ||
    description !== (plan?.description ?? "") ||
    chosen.map((c) => c.id).join(" ") !== cases.map((c) => c.id).join(" ");
  const guard = useUnsavedChanges(unsaved && !save.isPending, plan ? `“${plan.name}”` : "this new test plan");

  // The catalog names the list `test_case_ids` in CreateTestPlan and `test_case_ids.ids` in
  // UpdateTestPlan (where it is a TestCaseIdList).
  const casesField = plan ? "test_case_ids.ids" : "test_case_ids";
  const errors = formErrors(save, {
    name,
    description,
    [casesField]: chosen.map((c) => c.id),
  });
  const missingCase = caseNotFound(save.error, chosen);
  const gone = missingCase?.testCase;
  const full = chosen.length >= planBound;
  const disabledCount = chosen.filter((c) => !c.enabled).length;

  useEffect(() => {
    const target = focusAfter.current;
    focusAfter.current = null;
    if (!target) return;
    const rowOf = (id: string) => list.current?.querySelector<HTMLElement>(`[data-case="${CSS.escape(id)}"]`);
    if ("search" in target) search.current?.focus();
    else if ("row" in target) rowOf(target.row)?.focus();
    // The same button or row again, unless the move disabled that button (first or last now).
    else if (target.element.isConnected && !target.element.matches(":disabled")) target.element.focus();
    else rowOf(target.id)?.focus();
  });

  const move = (index: number, by: -1 | 1) => {
    const testCase = chosen[index];
    const to = index + by;
    if (!testCase) return;
    if (to < 0 || to >= chosen.length) {
      setAnnouncement(`${testCase.name} is already ${to < 0 ? "first" : "last"}.`);
      return;
    }
    const next = [...chosen];
    next.splice(index, 1);
    next.splice(to, 0, testCase);
    const active = document.activeElement;
    focusAfter.current =
      active instanceof HTMLElement ? { element: active, id: testCase.id } : { row: testCase.id };
    setChosen(next);
    setAnnouncement(`${testCase.name} moved to position ${to + 1} of ${next.length}.`);
  };
  const remove = (index: number) => {
    const testCase = chosen[index];
    if (!testCase) return;
    const next = chosen.filter((_, i) => i !== index);
    const neighbour = next[index] ?? next[index - 1];
    focusAfter.current = neighbour ? { row: neighbour.id } : { search: true };
    setChosen(next);
    setAnnouncement(`${testCase.name} removed from the plan. ${plural(next.length, "test case")} left.`);
  };
  /** From the picker: ticking adds at the end (while there is room), unticking removes. */
  const toggle = (testCase: TestCase) => {
    const index = chosen.findIndex((c) => c.id === testCase.id);
    if (index >= 0) {
      setChosen(chosen.filter((c) => c.id !== testCase.id));
      setAnnouncement(`${testCase.name} removed from the plan.`);
    } else if (!full) {
      setChosen([...chosen, testCase]);
      setAnnouncement(`${testCase.name} added as test case ${chosen.length + 1}.`);
    }
  };
  const addAll = (listed: TestCase[]) => {
    const known = new Set(chosen.map((c) => c.id));
    const added = listed.filter((c) => !known.has(c.id)).slice(0, planBound - chosen.length);
    setChosen([...chosen, ...added]);
    setAnnouncement(
      `${plural(added.length, "test case")} added; the plan holds ${plural(chosen.length + added.length, "test case")}.`,
    );
  };
  const onRowKey = (event: KeyboardEvent<HTMLLIElement>, index: number) => {
    const onRow = event.target === event.currentTarget;
    if (event.key !== "ArrowUp" && event.key !== "ArrowDown") return;
    if (event.altKey) {
      event.preventDefault();
      move(index, event.key === "ArrowUp" ? -1 : 1);
    } else if (onRow) {
      // Plain arrows go from row to row.
      event.preventDefault();
      const sibling =
        event.key === "ArrowUp"
          ? event.currentTarget.previousElementSibling
          : event.currentTarget.nextElementSibling;
      if (sibling instanceof HTMLElement) sibling.focus();
    }
  };

  // A refusal may come from something changed elsewhere (a test case deleted): the picker reads
  // the project's cases again. The form keeps what was typed and chosen.
  const refresh = () => void queryClient.invalidateQueries();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const testCaseIds = chosen.map((c) => c.id);
    const done = async (saved: TestPlan | undefined) => {
      setPlan(saved);
      guard.leaveFreely();
      await queryClient.invalidateQueries();
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
        { projectId, name, description, testCaseIds },
        { onSuccess: (answer) => done(answer.testPlan), onError: refresh },
      );
  };
  const back = plan ? path(`/test-plans/${plan.id}`) : path("/test-plans");
  const casesError = errors.at(casesField);

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
          <Field
            label="Name"
            hint="E.g. Smoke or Checkout. At most 200 characters; pipelines can start the plan by it."
            error={errors.at("name")}
            required
          >
            {(control) => (
              <input
                {...control}
                className="input"
                // biome-ignore lint/a11y/noAutofocus: the first field of a page whose only purpose is this form
                autoFocus={!plan}
                value={name}
                onChange={(e) => setName(e.target.value)}
              />
            )}
          </Field>
          <Field
            label="Description"
            hint="What the plan checks and when to run it. At most 2000 characters."
            error={errors.at("description")}
            optional
          >
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
        </div>

        <div className="plan-columns">
          <section className="panel plan-panel" aria-labelledby={`${ids}-chosen`}>
            <div className="section-head">
              <h2 id={`${ids}-chosen`}>Test cases, in run order</h2>
              <span className="muted small plan-count">
                {chosen.length} of at most {planBound}
              </span>
            </div>
            <p className="muted small" id={`${ids}-keys`}>
              Move a test case with its arrow buttons, or focus its row and press Alt+↑ or Alt+↓ (↑ and ↓
              alone go from row to row).{" "}
              {disabledCount > 0 &&
                `${plural(disabledCount, "disabled test case")}: runs of the plan leave ${disabledCount === 1 ? "it" : "them"} out.`}
            </p>
            {casesError && (
              <p className="field-error notice notice-error" role="alert">
                {casesError}
              </p>
            )}
            {gone && (
              <p className="notice notice-error" role="alert">
                “{gone.name}” was deleted since it was picked: remove it and save again.
              </p>
            )}
            {full && (
              <p className="notice notice-warning" role="status">
                The plan holds {planBound} test cases, the most a plan can (one run holds at most {planBound}
                ). Remove one to add another.
              </p>
            )}
            {chosen.length === 0 ? (
              <Empty title="No test cases in this plan yet.">
                <p>
                  Tick them under “Add test cases”. A plan without enabled test cases cannot be run, but it
                  can be saved.
                </p>
              </Empty>
            ) : (
              <ol
                ref={list}
                className="plan-cases"
                aria-labelledby={`${ids}-chosen`}
                aria-describedby={`${ids}-keys`}
              >
                {chosen.map((testCase, index) => (
                  <li
                    key={testCase.id}
                    data-case={testCase.id}
                    className={`plan-case${gone?.id === testCase.id ? " plan-case-gone" : ""}`}
                    // biome-ignore lint/a11y/noNoninteractiveTabindex: a row is focused to move it with Alt+↑/↓
                    tabIndex={0}
                    aria-label={`${testCase.name}, ${index + 1} of ${chosen.length}${testCase.enabled ? "" : ", disabled"}`}
                    onKeyDown={(event) => onRowKey(event, index)}
                  >
                    <span className="plan-case-number" aria-hidden="true">
                      {index + 1}
                    </span>
                    <span className="plan-case-name">
                      {testCase.name}
                      {!testCase.enabled && (
                        <>
                          {" "}
                          <Badge tone="neutral">Disabled</Badge>
                        </>
                      )}
                    </span>
                    <span className="plan-case-actions">
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Move ${testCase.name} up`}
                        title="Move up (Alt+↑)"
                        disabled={index === 0}
                        onClick={() => move(index, -1)}
                      >
                        ↑
                      </button>
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Move ${testCase.name} down`}
                        title="Move down (Alt+↓)"
                        disabled={index === chosen.length - 1}
                        onClick={() => move(index, 1)}
                      >
                        ↓
                      </button>
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Remove ${testCase.name}`}
                        onClick={() => remove(index)}
                      >
                        Remove
                      </button>
                    </span>
                  </li>
                ))}
              </ol>
            )}
            <p className="visually-hidden" role="status" aria-live="polite">
              {announcement}
            </p>
          </section>

          <CasePicker
            projectId={projectId}
            chosen={chosen}
            full={full}
            searchRef={search}
            onToggle={toggle}
            onAddAll={addAll}
          />
        </div>

        {errors.other && !missingCase && !conflict && <ErrorNotice error={save.error} />}
        {conflict && (
          <div className="notice notice-error conflict-notice" role="alert">
            <p>
              Not saved: <WhoSaved conflict={conflict} />; you started from version {conflict.expectedVersion}
              .
            </p>
            <button type="button" className="button button-small" onClick={() => setConflictOpen(true)}>
              Copy my changes or reload
            </button>
          </div>
        )}
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
          mine={planAsText(name, description, chosen)}
          onReload={onReload}
          onClose={() => setConflictOpen(false)}
        />
      )}
    </>
  );
}

/** A plan draft as "Copy my changes" gives it: its name, description and test cases in run order. */
function planAsText(name: string, description: string, chosen: TestCase[]): string {
  return [
    `Name: ${name}`,
    `Description: ${description || "(none)"}`,
    chosen.length === 0 ? "Test cases: none" : "Test cases, in run order:",
    ...chosen.map((testCase, i) => `${i + 1}. ${testCase.name} (${testCase.id})`),
  ].join("\n");
}

/** The project's test cases found by name, each ticked while it is in the plan. */
function CasePicker({
  projectId,
  chosen,
  full,
  searchRef,
  onToggle,
  onAddAll,
}: {
  projectId: string;
  chosen: TestCase[];
  full: boolean;
  searchRef: RefObject<HTMLInputElement | null>;
  onToggle: (testCase: TestCase) => void;
  onAddAll: (listed: TestCase[]) => void;
}) {
  const { path } = useProject();
  const ids = useId();
  const [search, setSearch] = useState("");
  const searched = useDeferredValue(search.trim());
  const listed = useQuery(
    ConsoleService.method.listTestCases,
    { projectId, search: searched },
    { placeholderData: keepPreviousData },
  );
  const inPlan = new Set(chosen.map((c) => c.id));
  const cases = listed.data?.testCases ?? [];
  const addable = cases.filter((c) => !inPlan.has(c.id)).length;
  return (
    <section className="panel plan-panel" aria-labelledby={`${ids}-title`}>
      <div className="section-head">
        <h2 id={`${ids}-title`}>Add test cases</h2>
        {addable > 0 && !full && (
          <button type="button" className="button button-small" onClick={() => onAddAll(cases)}>
            Add all {addable} listed
          </button>
        )}
      </div>
      <input
        ref={searchRef}
        className="input"
        type="search"
        placeholder="Name contains…"
        aria-label="Search test cases by name"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      <div className="checklist plan-picker" aria-busy={listed.isFetching}>
        {listed.isPending && <Loading what="test cases" />}
        {listed.error ? <Failed error={listed.error} retry={() => void listed.refetch()} /> : null}
        {listed.data && cases.length === 0 && (
          <p className="muted small">
            {searched ? (
              `No test case matches “${searched}”.`
            ) : (
              <>
                This project has no test cases yet: see the <Link to={path("/test-cases")}>Test cases</Link>{" "}
                page.
              </>
            )}
          </p>
        )}
        {cases.map((testCase) => {
          const ticked = inPlan.has(testCase.id);
          return (
            <label key={testCase.id} className="checklist-item">
              <input
                type="checkbox"
                checked={ticked}
                disabled={!ticked && full}
                onChange={() => onToggle(testCase)}
              />
              <span>
                {testCase.name}
                {!testCase.enabled && (
                  <>
                    {" "}
                    <Badge tone="neutral">Disabled</Badge>
                  </>
                )}
                {testCase.tags.length > 0 && (
                  <span className="muted small"> · {testCase.tags.join(", ")}</span>
                )}
              </span>
            </label>
          );
        })}
      </div>
      {full && cases.length > 0 && (
        <p className="muted small">The plan is full: remove a test case from it to add another.</p>
      )}
      {listed.data?.truncated && (
        <p className="muted small">
          More than {planBound} test cases match: only the first {planBound} are listed. Search by name to
          find the others.
        </p>
      )}
    </section>
  );
}

/**
 * A save refused because a test case is no longer one of the project's: the catalog's NOT_FOUND
 * names the id ("tc_… is not a test case of this project"). `testCase` is the chosen case it names,
 * none once that case was removed from the plan (then nothing is left to say).
 */
function caseNotFound(error: unknown, chosen: TestCase[]): { testCase?: TestCase } | undefined {
  if (!isNotFound(error)) return undefined;
  const message = errorOf(error).rawMessage;
  if (!/\btc_\w+/.test(message)) return undefined;
  return { testCase: chosen.find((c) => message.includes(c.id)) };
}
