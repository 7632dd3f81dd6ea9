// A project's overview: its recent runs and its credit balance, and where to start.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link } from "react-router";
import { isNotFound } from "../../api";
import { Empty, NotFound, QueryView } from "../../components/States";
import { canAdminister, count, roleName } from "../../format";
import { useProject } from "../../project";
import { NoCredits } from "../credits/CreditsHelp";
import { HealthSettingsSetting } from "../health/HealthSettings";
import { RunTable, useRunNames } from "../runs/Runs";
import { StartRunDialog } from "../runs/StartRunDialog";
import { DeleteProjectDialog } from "./DeleteProjectDialog";
import { EditProjectDialog } from "./EditProjectDialog";

export function ProjectOverview() {
  const { projectId, project, editor, path } = useProject();
  const runs = useQuery(ConsoleService.method.listRuns, { projectId, pageSize: 5 });
  const credits = useQuery(ConsoleService.method.getCredits, { projectId, pageSize: 1 });
  const names = useRunNames(projectId);
  const [starting, setStarting] = useState(false);
  const [managing, setManaging] = useState<"rename" | "delete">();
  if (isNotFound(project.error)) return <NotFound what="Project" />;
  if (project.isPending || project.error) return <QueryView query={project} what="the project" />;
  const { project: p, organization, role } = project.data;
  return (
    <>
      <p className="eyebrow">{organization?.name}</p>
      <div className="page-head">
        <h1>{p?.name}</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => setStarting(true)}>
            Start run
          </button>
        )}
      </div>
      {p?.description && <p className="lead">{p.description}</p>}
      <p className="muted">Your role here: {roleName[role]}</p>
      {/* Over the page, not in the narrow balance panel: the first thing a member must know. */}
      {credits.data?.balance === 0n && <NoCredits projectId={projectId} />}
      <div className="overview">
        <section className="overview-runs" aria-labelledby="recent-heading">
          <div className="section-head">
            <h2 id="recent-heading">Recent runs</h2>
            <Link to={path("/runs")}>All runs</Link>
          </div>
          <QueryView
            query={runs}
            what="recent runs"
            isEmpty={(data) => data.runs.length === 0}
            empty={
              <Empty title="No runs yet">
                <p>
                  Pipelines and AI agents start runs through the REST API with a project API key: create one
                  in <Link to={path("/settings/api")}>Settings: API &amp; CI</Link>, where you also find a
                  curl to try it.
                  {editor && " You can also start one here."}
                </p>
              </Empty>
            }
          >
            {(data) => <RunTable runs={data.runs} names={names} />}
          </QueryView>
        </section>
        <aside className="panel balance column-side" aria-labelledby="balance-heading">
          <h2 id="balance-heading" className="balance-label">
            Credit balance
          </h2>
          <QueryView query={credits} what="the balance">
            {(data) => <p className="balance-value">{count(data.balance)}</p>}
          </QueryView>
          <p className="muted small">
            One credit per test. <Link to={path("/credits")}>Ledger</Link>
          </p>
        </aside>
      </div>
      {p && canAdminister(role) && (
        <section className="manage-project panel" aria-labelledby="manage-heading">
          <h2 id="manage-heading">Manage project</h2>
          <div className="setting">
            <p>Rename the project or change its description.</p>
            <button type="button" className="button" onClick={() => setManaging("rename")}>
              Rename project
            </button>
          </div>
          <div className="setting">
            <p>Delete the project with its content; its API keys stop working.</p>
            <button type="button" className="button button-danger" onClick={() => setManaging("delete")}>
              Delete project
            </button>
          </div>
          <HealthSettingsSetting projectId={projectId} />
          {managing === "rename" && (
            <EditProjectDialog project={p} open onClose={() => setManaging(undefined)} />
          )}
          <DeleteProjectDialog
            project={p}
            organizationId={organization?.id ?? ""}
            open={managing === "delete"}
            onClose={() => setManaging(undefined)}
          />
        </section>
      )}
      {editor && <StartRunDialog projectId={projectId} open={starting} onClose={() => setStarting(false)} />}
    </>
  );
}
