// An organization's projects.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link, useParams } from "react-router";
import { isNotFound } from "../api";
import { Empty, Failed, Loading, NotFound } from "../components/States";
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
      {projects.isPending && <Loading what="projects" />}
      {projects.error && <Failed error={projects.error} retry={() => void projects.refetch()} />}
      {projects.data?.projects.length === 0 && (
        <Empty title="This organization has no projects yet.">
          <p>
            An admin creates them with <code>testrunctl project create</code>.
          </p>
        </Empty>
      )}
      <ul className="cards">
        {projects.data?.projects.map((project) => (
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
    </>
  );
}
