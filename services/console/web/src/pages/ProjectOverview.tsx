// A project's overview.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link, useParams } from "react-router";
import { isNotFound } from "../api";
import { Failed, Loading, NotFound } from "../components/States";
import { roleName } from "../format";

export function ProjectOverview() {
  const { projectId = "" } = useParams();
  const project = useQuery(ConsoleService.method.getProject, { projectId });
  if (isNotFound(project.error)) return <NotFound what="Project" />;
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <Failed error={project.error} retry={() => void project.refetch()} />;
  const { project: p, organization, role } = project.data;
  return (
    <>
      <p className="eyebrow">{organization?.name}</p>
      <h1>{p?.name}</h1>
      {p?.description && <p className="lead">{p.description}</p>}
      <p className="muted">Your role here: {roleName[role]}</p>
      <section className="panel">
        <h2>Start here</h2>
        <p>
          Pipelines and AI agents start runs through the REST API with a project API key. Create one in{" "}
          <Link to={`/projects/${projectId}/settings/api`}>Settings: API &amp; CI</Link>, where you also find
          a curl to try it.
        </p>
      </section>
    </>
  );
}
