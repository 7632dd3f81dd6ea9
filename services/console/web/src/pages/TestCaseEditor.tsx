// Creating and editing a test case (Editors and above): its name, tags, enabled flag and steps in a
// form, or the same test case as JSON in the file format of docs/runs.md; both edit one model.
// `{{NAME}}` references are checked as they are typed; what the catalog refuses is shown at the
// field it names, focus on the first. Leaving with unsaved changes asks first. A save is made on the
// version the editor loaded: when someone else saved since, it is refused and the conflict dialog
// offers to copy the draft or reload (docs/console.md, "Authoring test cases", "Two people editing").
import { useQuery } from "@connectrpc/connect-query";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useMemo, useRef, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { editConflictOf, fieldViolationsOf, isNotFound, messageOf } from "../api";
import { CopyButton } from "../components/CopyButton";
import { EditConflictDialog, WhoSaved } from "../components/EditConflictDialog";
import { Field, useFocusOnError } from "../components/Field";
import { NotFound, QueryView } from "../components/States";
import { VersionLine } from "../components/Version";
import { draftOfJson, jsonOfDraft, snapshotOf } from "../features/test-cases/json-view";
import { type CaseDraft, caseOfDraft, draftOfCase, emptyCase, maxSteps } from "../features/step-editor/kinds";
import type { FieldMessages } from "../features/step-editor/model";
import { type Said, TagsInput } from "../features/step-editor/Rows";
import { referenceWarnings } from "../features/test-cases/references";
import { StepsEditor } from "../features/step-editor/StepsEditor";
import { useUnsavedChanges } from "../components/UnsavedChanges";
import { useSaveTestCase } from "../features/test-cases/useSaveTestCase";
import { stillAtSentValues, violationMessages } from "../features/test-cases/violations";
import { plural } from "../format";
import { useProject } from "../project";

export function TestCaseEditor() {
  const { testCaseId } = useParams();
  const { projectId, project, editor, path } = useProject();
  const found = useQuery(
    ConsoleService.method.getTestCase,
    { projectId, testCaseId },
    { enabled: testCaseId !== undefined },
  );
  // Bumped by "Reload the current version": the editor starts again from the case as read now.
  const [generation, setGeneration] = useState(0);
  if (isNotFound(project.error) || isNotFound(found.error)) return <NotFound what="Test case" />;
  if (project.isPending || project.error) return <QueryView query={project} what="the project" />;
  if (testCaseId !== undefined && (found.isPending || found.error))
    return <QueryView query={found} what="the test case" />;
  const loaded = found.data?.testCase;
  if (testCaseId !== undefined && !loaded) return <NotFound what="Test case" />;
  const back = loaded ? path(`/test-cases/${loaded.id}`) : path("/test-cases");
  if (!editor)
    return (
      <section className="narrow-page">
        <h1>Editors change test cases</h1>
        <p>Your role in this project lets you read test cases, not change them.</p>
        <p>
          <Link to={back}>Back to {loaded ? loaded.name : "the test cases"}</Link>
        </p>
      </section>
    );
  const { draft, unknownKinds } = loaded ? draftOfCase(loaded) : { draft: emptyCase(), unknownKinds: 0 };
  if (unknownKinds > 0)
    return (
      <section className="narrow-page">
        <h1>This test case cannot be edited here yet</h1>
        <p>It has steps of a kind this console does not know. Edit it from a file with testrunctl.</p>
        <p>
          <Link to={back}>Back to {loaded?.name}</Link>
        </p>
      </section>
    );
  const reload = async () => {
    const { error } = await found.refetch();
    // Deleted since: this page says so once the editor is gone.
    if (error && !isNotFound(error)) throw error;
    setGeneration((n) => n + 1);
  };
  // Keyed by the case and the reloads: the form reads the loaded case once and never takes a
  // background refetch over an edit.
  return (
    <CaseEditor
      key={`${loaded?.id ?? "new"}:${generation}`}
      projectId={projectId}
      loaded={loaded}
      initial={draft}
      onReload={reload}
    />
  );
}

type View = "form" | "json";

function CaseEditor({
  projectId,
  loaded: opened,
  initial,
  onReload,
}: {
  projectId: string;
  loaded: TestCase | undefined;
  initial: CaseDraft;
  onReload: () => Promise<void>;
}) {
  // The version edited, as it was read (a refetch of the page's query does not change it): a save
  // is made on it, and the editor goes on from the version each save stores.
  const [loaded, setLoaded] = useState(opened);
  const navigate = useNavigate();
  const { path } = useProject();
  const [baseline] = useState(() => snapshotOf(initial));
  const [draft, setDraft] = useState(initial);
  const [view, setView] = useState<View>("form");
  // The JSON view's text as typed, the text it opened with, and why it could not be read back.
  const [json, setJson] = useState({ text: "", opened: "", error: undefined as string | undefined });
  // After a save or a switch to JSON was held back by the form's own checks, they are shown (and
  // updated as the person fixes them) until the next attempt.
  const [checking, setChecking] = useState(false);
  // A new object at each refused attempt: focus moves to the first field with an error.
  const [refusal, setRefusal] = useState<object>();
  const variables = useQuery(ConsoleService.method.listVariables, { projectId });
  const saver = useSaveTestCase(projectId, loaded);
  const conflict = editConflictOf(saver.error);
  const [conflictOpen, setConflictOpen] = useState(false);
  // What "Copy my changes" gives: the draft that was refused, in the file format.
  const mine = useMemo(() => {
    const written = saver.sent && jsonOfDraft(saver.sent);
    return written && "text" in written ? written.text : "";
  }, [saver.sent]);
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, refusal);

  const problems = useMemo(() => (checking ? caseOfDraft(draft).problems : new Map()), [checking, draft]);
  const refused = useMemo(
    () =>
      saver.error && saver.sent ? violationMessages(fieldViolationsOf(saver.error), saver.sent) : undefined,
    [saver.error, saver.sent],
  );
  const warnings = useMemo(
    () =>
      referenceWarnings(
        draft,
        variables.data?.variables.map((variable) => variable.name),
      ),
    [draft, variables.data],
  );
  // The catalog's errors stay at the fields still holding what it refused.
  const stillRefused = useMemo(
    () => (refused && saver.sent ? stillAtSentValues(refused.fields, saver.sent, draft) : new Map()),
    [refused, saver.sent, draft],
  );
  const errors: FieldMessages = new Map([...stillRefused, ...problems]);
  const said = (field: string): Said => ({ error: errors.get(field), warning: warnings.get(field) });
  const messages = {
    said: (stepKey: string, field: string) => said(`${stepKey}:${field}`),
    attention: (stepKey: string, prefix: string) =>
      [...errors.keys(), ...warnings.keys()].some((field) => field.startsWith(`${stepKey}:${prefix}`)),
  };
  // What the catalog said that belongs to no field: a refusal (role, a deleted case) or a failure.
  // A conflict has its own notice and dialog.
  const other =
    saver.error &&
    !conflict &&
    (fieldViolationsOf(saver.error).length === 0 || (refused?.unplaced.length ?? 0) > 0)
      ? [messageOf(saver.error), ...(refused?.unplaced ?? [])].join(" ")
      : undefined;

  const unsaved = snapshotOf(draft) !== baseline || (view === "json" && json.text !== json.opened);
  const what = loaded ? `“${loaded.name}”` : "this new test case";
  const guard = useUnsavedChanges(unsaved && !saver.pending, what);

  const refuse = () => setRefusal({});
  /** The JSON view's text as the draft, or undefined (its error shown) when it is not one. */
  const readJson = (): CaseDraft | undefined => {
    const read = draftOfJson(json.text);
    if ("error" in read) {
      setJson({ ...json, error: read.error });
      refuse();
      return undefined;
    }
    return read.draft;
  };
  const showJson = () => {
    const written = jsonOfDraft(draft);
    if ("problems" in written) {
      setChecking(true);
      refuse();
      return;
    }
    setJson({ text: written.text, opened: written.text, error: undefined });
    setView("json");
  };
  const showForm = () => {
    const read = readJson();
    if (!read) return;
    setDraft(read);
    setView("form");
  };
  const discardJson = () => {
    setJson({ text: "", opened: "", error: undefined });
    setView("form");
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const toSave = view === "json" ? readJson() : draft;
    if (!toSave) return;
    const { value, problems: cannot } = caseOfDraft(toSave);
    setDraft(toSave);
    if (cannot.size > 0) {
      setView("form");
      setChecking(true);
      refuse();
      return;
    }
    setChecking(false);
    saver.save(toSave, value, {
      onSaved: (saved) => {
        setLoaded(saved);
        guard.leaveFreely();
        navigate(path(`/test-cases/${saved.id}`), {
          replace: true,
          state: { notice: loaded ? `${saved.name} saved.` : `${saved.name} created.` },
        });
      },
      onRefused: (error) => {
        // Saved by someone else since this version was read: the draft stays as it is.
        if (editConflictOf(error)) {
          setConflictOpen(true);
          return;
        }
        // The catalog's field errors are shown at the form's fields.
        setView("form");
        refuse();
      },
    });
  };
  const setSteps = (steps: CaseDraft["steps"]) => setDraft({ ...draft, steps });
  const cancelTo = loaded ? path(`/test-cases/${loaded.id}`) : path("/test-cases");

  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-cases")}>Test cases</Link>
        {loaded && (
          <>
            {" / "}
            <Link to={cancelTo}>{loaded.name}</Link>
          </>
        )}
      </p>
      <div className="page-head">
        <h1>{loaded ? `Edit ${loaded.name}` : "New test case"}</h1>
        <fieldset className="view-switch">
          <legend className="visually-hidden">Edit as</legend>
          <button
            type="button"
            className="button button-small"
            aria-pressed={view === "form"}
            onClick={() => view === "json" && showForm()}
          >
            Form
          </button>
          <button
            type="button"
            className="button button-small"
            aria-pressed={view === "json"}
            onClick={() => view === "form" && showJson()}
          >
            JSON
          </button>
        </fieldset>
      </div>
      {loaded && <VersionLine item={loaded} />}
      <p className="lead">
        {view === "form"
          ? "Steps run in order against the environment a run chooses; the first that fails ends the test."
          : "The file format of testrunctl case create (docs/runs.md): paste a case from a file, or copy this one into one."}
      </p>
      {checking && problems.size > 0 && (
        <p className="notice notice-error" role="alert">
          {plural(problems.size, "field")} cannot be read as written: see the marked fields.
        </p>
      )}
      <form ref={form} className="editor" onSubmit={submit} noValidate aria-label="Test case">
        {view === "form" ? (
          <>
            <section className="panel editor-about" aria-label="About">
              <Field
                label="Name"
                hint="Shown in runs and results. At most 200 characters."
                {...said("name")}
                required
              >
                {(control) => (
                  <input
                    {...control}
                    className="input"
                    placeholder="log in with the demo user"
                    value={draft.name}
                    onChange={(event) => setDraft({ ...draft, name: event.target.value })}
                  />
                )}
              </Field>
              <TagsInput
                tags={draft.tags}
                onChange={(tags) => setDraft({ ...draft, tags })}
                error={errors.get("tags")}
              />
              <label className="checkbox-field">
                <input
                  type="checkbox"
                  checked={draft.enabled}
                  onChange={(event) => setDraft({ ...draft, enabled: event.target.checked })}
                />
                <span>
                  <strong>Enabled</strong>
                  <br />
                  <span className="muted small">
                    Plans and tags run it. A disabled case runs only when chosen by name.
                  </span>
                </span>
              </label>
              <label className="checkbox-field">
                <input
                  type="checkbox"
                  checked={draft.recordTrace}
                  onChange={(event) => setDraft({ ...draft, recordTrace: event.target.checked })}
                />
                <span>
                  <strong>Record a trace every time</strong>
                  <br />
                  <span className="muted small">
                    Its browser steps keep a Playwright trace of each run, not only of a failed one. Traces
                    hold what the page showed.
                  </span>
                </span>
              </label>
            </section>
            <section className="section" aria-labelledby="steps-heading">
              <div className="section-head">
                <h2 id="steps-heading">
                  Steps{" "}
                  <span className="muted small">
                    {draft.steps.length} of {maxSteps}
                  </span>
                </h2>
                <KnownNames
                  projectId={projectId}
                  names={variables.data?.variables.map((v) => v.name)}
                  failed={variables.error !== null}
                />
              </div>
              <StepsEditor
                steps={draft.steps}
                onChange={setSteps}
                messages={messages}
                listSaid={{ error: errors.get("steps") }}
              />
            </section>
          </>
        ) : (
          <Field
            label="The test case as JSON"
            hint="Form and Save read this text; until then the form keeps what it had."
            error={json.error}
          >
            {(control) => (
              <textarea
                {...control}
                className="input input-code json-view"
                rows={Math.min(40, Math.max(12, json.text.split("\n").length + 1))}
                spellCheck={false}
                autoCapitalize="off"
                value={json.text}
                onChange={(event) => setJson({ ...json, text: event.target.value, error: undefined })}
              />
            )}
          </Field>
        )}
        {view === "json" && (
          <div className="json-tools">
            <CopyButton text={json.text} label="Copy JSON" />
            {json.text !== json.opened && (
              <span className="small">
                <button type="button" className="link-button" onClick={discardJson}>
                  Discard the JSON changes
                </button>{" "}
                <span className="muted">and go back to the form as it was.</span>
              </span>
            )}
          </div>
        )}
        {saver.tooLarge && (
          <p className="notice notice-error" role="alert">
            {saver.tooLarge}
          </p>
        )}
        {other && (
          <p className="notice notice-error" role="alert">
            {other}
          </p>
        )}
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
        <div className="editor-actions">
          <span className="muted small" aria-live="polite">
            {unsaved ? "Unsaved changes" : "No changes"}
          </span>
          <Link className="button" to={cancelTo}>
            Cancel
          </Link>
          <button
            type="submit"
            className="button button-primary"
            disabled={saver.pending}
            aria-busy={saver.pending}
          >
            {saver.pending ? "Saving…" : loaded ? "Save test case" : "Create test case"}
          </button>
        </div>
      </form>
      {guard.prompt}
      <EditConflictDialog
        conflict={conflictOpen ? conflict : undefined}
        what="test case"
        mine={mine}
        onReload={onReload}
        onClose={() => setConflictOpen(false)}
      />
    </>
  );
}

/** The names steps can use as `{{NAME}}`: the project's variables (values never shown). */
function KnownNames({
  projectId,
  names,
  failed,
}: {
  projectId: string;
  names: string[] | undefined;
  failed: boolean;
}) {
  if (failed)
    return (
      <p className="muted small known-names">
        The project's variables could not be read: <code>{"{{NAME}}"}</code> references are not checked.
      </p>
    );
  if (names === undefined) return null;
  return (
    <p className="muted small known-names">
      {names.length === 0 ? "No project variables yet" : "Project variables: "}
      {names.map((name, i) => (
        <span key={name}>
          {i > 0 && " "}
          <code>{`{{${name}}}`}</code>
        </span>
      ))}
      {" · "}
      <Link to={`/projects/${projectId}/variables`}>Variables</Link>
    </p>
  );
}
