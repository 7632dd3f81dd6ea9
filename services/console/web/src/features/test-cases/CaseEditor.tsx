// The test case editor's form (TestCaseEditorPage.tsx opens it on the case as read): the draft,
// its two views, the checks made before a save and the save itself, on the version loaded.
import { useQuery } from "@connectrpc/connect-query";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useMemo, useRef, useState } from "react";
import { Link, useNavigate } from "react-router";
import { editConflictOf } from "../../api";
import { useFocusOnError } from "../../components/Field";
import { useUnsavedChanges } from "../../components/UnsavedChanges";
import { VersionLine } from "../../components/Version";
import { plural } from "../../format";
import { useProject } from "../../project";
import { type CaseDraft, caseOfDraft, maxSteps } from "../step-editor/kinds";
import { StepsEditor } from "../step-editor/StepsEditor";
import { ConflictNotice } from "../versions/ConflictNotice";
import { EditConflictDialog } from "../versions/EditConflictDialog";
import { CaseAbout } from "./CaseAbout";
import { CaseJson, type JsonText } from "./CaseJson";
import { draftOfJson, jsonOfDraft, snapshotOf } from "./json-view";
import { KnownNames } from "./KnownNames";
import { useCaseMessages } from "./useCaseMessages";
import { useSaveTestCase } from "./useSaveTestCase";
import { type View, ViewSwitch } from "./ViewSwitch";

const noJson: JsonText = { text: "", opened: "", error: undefined };

export function CaseEditor({
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
  const [json, setJson] = useState(noJson);
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
  const { problems, said, steps, other, errors } = useCaseMessages({
    draft,
    checking,
    error: saver.error,
    sent: saver.sent,
    variables: variables.data?.variables,
  });

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
    setJson(noJson);
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
        <ViewSwitch view={view} onForm={showForm} onJson={showJson} />
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
            <CaseAbout draft={draft} onChange={setDraft} said={said} />
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
                onChange={(edited) => setDraft({ ...draft, steps: edited })}
                messages={steps}
                listSaid={{ error: errors.get("steps") }}
              />
            </section>
          </>
        ) : (
          <CaseJson json={json} onChange={setJson} onDiscard={discardJson} />
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
        {conflict && <ConflictNotice conflict={conflict} onOpen={() => setConflictOpen(true)} />}
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
