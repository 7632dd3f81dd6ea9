// "/": the first project of the first organization, or that organization's page when it has none.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Navigate } from "react-router";
import { QueryView } from "../../components/States";
import { useSession } from "../../session";

export function Home() {
  const first = useSession().memberships[0]?.organization;
  const projects = useQuery(
    ConsoleService.method.listProjects,
    { organizationId: first?.id ?? "" },
    { enabled: !!first },
  );
  if (!first) return <Navigate to="/sign-in?error=not_a_member" replace />;
  if (projects.isPending || projects.error) return <QueryView query={projects} what="your projects" />;
  const project = projects.data.projects[0];
  return <Navigate to={project ? `/projects/${project.id}` : `/orgs/${first.id}`} replace />;
}
