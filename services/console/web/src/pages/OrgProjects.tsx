// An organization's projects.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link, useParams } from "react-router";
import { isNotFound } from "../api";
import { Empty, NotFound, QueryView } from "../components/States";
import { Time } from "../components/Time";
import { useSession } from "../session";

export function OrgProjects() {
  const { orgId = "" } = useParams();
  const membership = useSession().memberships.find((m) => m.organization?.id === orgId);
  const projects = useQuery(
    ConsoleService.method.listProjects,
    { organizationId: orgId },
    { enabled: !!membership },
  );
  if (!membership || isNotFound(projects.error)) return <NotFound what="Organization" />;
  return (
    <>
      <h1>{membership.organization?.name}</h1>
      <p className="lead">Projects of this organization.</p>
      <QueryView
        query={projects}
        what="projects"
        isEmpty={(data) => data.projects.length === 0}
        empty={
          <Empty title="This organization has no projects yet.">
            <p>
              An admin creates them with <code>testrunctl project create</code>.
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
    </>
  );
}
