// An organization's projects; Owners and Admins create them here.
import { useQuery } from "@connectrpc/connect-query";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link, useLocation, useParams } from "react-router";
import { isNotFound } from "../../api";
import { DoneNotice } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Time } from "../../components/Time";
import { canAdminister } from "../../format";
import { useSession } from "../../session";
import { CreateProjectDialog } from "./CreateProjectDialog";

export function OrgProjects() {
  const { orgId = "" } = useParams();
  const membership = useSession().memberships.find((m) => m.organization?.id === orgId);
  const projects = useQuery(
    ConsoleService.method.listProjects,
    { organizationId: orgId },
    { enabled: !!membership },
  );
  const [creating, setCreating] = useState(false);
  // Set by the delete dialog of the project just deleted.
  const deleted = (useLocation().state as { deleted?: string } | null)?.deleted;
  if (!membership || isNotFound(projects.error)) return <NotFound what="Organization" />;
  const admin = canAdminister(membership.member?.role ?? Role.UNSPECIFIED);
  return (
    <>
      <div className="page-head">
        <h1>{membership.organization?.name}</h1>
        {admin && (
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            New project
          </button>
        )}
      </div>
      <p className="lead">Projects of this organization.</p>
      <DoneNotice done={deleted && `Project ${deleted} deleted.`} />
      <QueryView
        query={projects}
        what="projects"
        isEmpty={(data) => data.projects.length === 0}
        empty={
          <Empty title="This organization has no projects yet.">
            <p>
              {admin
                ? "Create the first one: New project."
                : "An Owner or Admin of the organization creates them."}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <ul className="cards">
            {data.projects.map((project) => (
              <li key={project.id} className="card">
                <h2>
                  <Link to={`/projects/${project.id}`}>{project.name}</Link>
                </h2>
                {project.description && <p>{project.description}</p>}
                <p className="muted">
                  Created <Time at={project.createdAt} />
                </p>
              </li>
            ))}
          </ul>
        )}
      </QueryView>
      {admin && (
        <CreateProjectDialog organizationId={orgId} open={creating} onClose={() => setCreating(false)} />
      )}
    </>
  );
}
