// One test case with its tags, state, plans and steps: the current version, or with `?version=N`
// one of its kept versions, read-only, under a banner saying so (a run's test links there). Editors
// and above run, edit, duplicate, enable or disable and delete it (docs/console.md, "Authoring test
// cases").
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { isNotFound, messageOf } from "../../api";
import { ErrorNotice } from "../../components/Dialog";
import { Fact, Facts } from "../../components/Facts";
import { DoneNotice } from "../../components/ListPage";
import { NotFound, QueryView } from "../../components/States";
import { StepList } from "../../components/Steps";
import { Time } from "../../components/Time";
import { VersionLine } from "../../components/Version";
import { plural } from "../../format";
import { useProject } from "../../project";
import { CaseHealthSection } from "../health/CaseHealthSection";
import { StartRunDialog } from "../runs/StartRunDialog";
import { VersionBanner } from "../versions/VersionBanner";
import { VersionMissing } from "../versions/VersionMissing";
import { versionParam } from "../versions/version-param";
import { DeleteTestCaseDialog } from "./DeleteTestCaseDialog";
import { EnabledBadge } from "./EnabledBadge";
import { retriesLabel } from "./retries";
import { SpecSection } from "./SpecSection";
import { Tags } from "./Tags";
import { useDuplicate } from "./useDuplicate";
import { useEnabledToggle } from "./useEnabledToggle";
import { useNotice } from "./useNotice";

/** What a test case's page has a dialog open for. */
type Open = "run" | "delete" | undefined;

export function TestCase() {
  const { testCaseId = "" } = useParams();
  const [params] = useSearchParams();
  const asked = versionParam(params.get("version"));
  const { projectId, project, path, editor } = useProject();
  const found = useQuery(
    ConsoleService.method.getTestCase,
    { projectId, testCaseId, ...(asked !== null && { version: asked }) },
    { enabled: !Number.isNaN(asked) },
  );
  const [notice, setNotice] = useNotice();
  const [open, setOpen] = useState<Open>();
  const enabling = useEnabledToggle(projectId, setNotice);
  const duplicate = useDuplicate(projectId);
  const current = path(`/test-cases/${testCaseId}`);
  if (Number.isNaN(asked))
    return <VersionMissing message="The version in the address is not a version number." current={current} />;
  if (isNotFound(project.error)) return <NotFound what="Test case" />;
  // A version no longer kept (or never had): the catalog's words say which are kept.
  if (asked !== null && isNotFound(found.error))
    return <VersionMissing message={messageOf(found.error)} current={current} />;
  if (isNotFound(found.error)) return <NotFound what="Test case" />;
  if (found.isPending || found.error) return <QueryView query={found} what="the test case" />;
  const { testCase, testPlans, currentVersion } = found.data;
  if (!testCase) return <NotFound what="Test case" />;
  const old = testCase.version !== currentVersion;
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-cases")}>Test cases</Link>
      </p>
      {old && (
        <VersionBanner
          item={testCase}
          currentVersion={currentVersion}
          current={path(`/test-cases/${testCase.id}`)}
        />
      )}
      <div className="page-head">
        <h1 className="title-with-badge">
          <span>{testCase.name}</span> <EnabledBadge enabled={testCase.enabled} />
        </h1>
        {editor && !old && (
          <div className="page-actions">
            <button type="button" className="button button-primary" onClick={() => setOpen("run")}>
              Run this test
            </button>
            {!testCase.playwright && (
              <Link className="button" to={path(`/test-cases/${testCase.id}/edit`)}>
                Edit
              </Link>
            )}
            <button
              type="button"
              className="button"
              onClick={() => {
                setNotice(undefined);
                duplicate.copy(testCase);
              }}
              disabled={duplicate.pending}
              aria-busy={duplicate.pending}
            >
              {duplicate.pending ? "Duplicating…" : "Duplicate"}
            </button>
            <button
              type="button"
              className="button"
              disabled={enabling.pending}
              onClick={() => {
                setNotice(undefined);
                enabling.toggle(testCase);
              }}
            >
              {testCase.enabled ? "Disable" : "Enable"}
            </button>
            <button type="button" className="button button-danger" onClick={() => setOpen("delete")}>
              Delete
            </button>
          </div>
        )}
      </div>
      <VersionLine item={testCase} />
      <DoneNotice done={notice} />
      <ErrorNotice error={enabling.error ?? duplicate.error} />
      {!testCase.enabled && (
        <p className="notice notice-info">
          Disabled: plans and tags leave it out of their runs; a run of chosen test cases still runs it.
        </p>
      )}
      <section className="panel" aria-label="About">
        <Facts>
          <Fact term="Tags">
            <Tags tags={testCase.tags} />
          </Fact>
          <Fact term={old ? "In test plans now" : "In test plans"}>
            {testPlans.length === 0 ? (
              <span className="muted">none</span>
            ) : (
              testPlans.map((plan, i) => (
                <span key={plan.id}>
                  {i > 0 && ", "}
                  <Link to={path(`/test-plans/${plan.id}`)}>{plan.name}</Link>
                </span>
              ))
            )}
          </Fact>
          {(testCase.recordTrace ||
            testCase.playwright ||
            testCase.steps.some((step) => step.kind.case === "browser")) && (
            <Fact term="Browser trace">
              {testCase.recordTrace ? "Recorded at every run" : "Recorded when the test fails"}
            </Fact>
          )}
          <Fact term="Retries">{retriesLabel(testCase.retries)}</Fact>
          <Fact term="Created">
            <Time at={testCase.createdAt} />
          </Fact>
        </Facts>
      </section>
      {testCase.playwright ? (
        <SpecSection
          projectId={projectId}
          testCase={testCase}
          editable={editor && !old}
          onSaved={setNotice}
        />
      ) : (
        <section aria-labelledby="steps-heading" className="section">
          <h2 id="steps-heading">{plural(testCase.steps.length, "step")}</h2>
          <p className="muted small">
            Run in order; the first that fails ends the test. <code>{"{{NAME}}"}</code> is a variable or a
            value saved by an earlier step.
          </p>
          <StepList steps={testCase.steps} />
        </section>
      )}
      {!old && <CaseHealthSection testCaseId={testCase.id} name={testCase.name} />}
      {editor && (
        <>
          <StartRunDialog
            projectId={projectId}
            open={open === "run"}
            onClose={() => setOpen(undefined)}
            only={{ id: testCase.id, name: testCase.name }}
          />
          <DeleteTestCaseDialog
            projectId={projectId}
            testCase={open === "delete" ? testCase : undefined}
            testPlans={testPlans}
            onClose={() => setOpen(undefined)}
          />
        </>
      )}
    </>
  );
}
