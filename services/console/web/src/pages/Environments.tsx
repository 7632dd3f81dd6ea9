// A project's environments: the systems under test, each a base URL; the default one marked.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { isNotFound } from "../api";
import { Empty, Failed, Loading, NotFound } from "../components/States";
import { Badge } from "../components/Status";
import { Time } from "../components/Time";
import { useProject } from "../project";

export function Environments() {
  const { projectId, project, name } = useProject();
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  if (isNotFound(project.error) || isNotFound(environments.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <h1>Environments</h1>
      <p className="lead">
        Where runs send their requests: each step's path is appended to the environment's base URL. A run
        without a chosen environment uses the default.
      </p>
      {environments.isPending && <Loading what="environments" />}
      {environments.error && <Failed error={environments.error} retry={() => void environments.refetch()} />}
      {environments.data?.environments.length === 0 && (
        <Empty title="No environments yet.">
          <p>
            An operator adds them with <code>testrunctl env create</code>.
          </p>
        </Empty>
      )}
      {environments.data && environments.data.environments.length > 0 && (
        <div className="table-scroll">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Base URL</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              {environments.data.environments.map((env) => (
                <tr key={env.id}>
                  <td data-label="Name" className="cell-strong">
                    {env.name} {env.isDefault && <Badge tone="active">Default</Badge>}
                  </td>
                  <td data-label="Base URL">
                    <code className="break">{env.baseUrl}</code>
                  </td>
                  <td data-label="Changed">
                    <Time at={env.updatedAt ?? env.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
