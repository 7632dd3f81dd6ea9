// A project's environments: the systems under test, each a base URL; the default one marked.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { isNotFound } from "../api";
import { DataTable } from "../components/DataTable";
import { Empty, NotFound, QueryView } from "../components/States";
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
      <QueryView
        query={environments}
        what="environments"
        isEmpty={(data) => data.environments.length === 0}
        empty={
          <Empty title="No environments yet.">
            <p>
              An operator adds them with <code>testrunctl env create</code>.
            </p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.environments}
            columns={[
              {
                label: "Name",
                className: "cell-strong",
                cell: (env) => (
                  <>
                    {env.name} {env.isDefault && <Badge tone="active">Default</Badge>}
                  </>
                ),
              },
              { label: "Base URL", cell: (env) => <code className="break">{env.baseUrl}</code> },
              { label: "Changed", cell: (env) => <Time at={env.updatedAt ?? env.createdAt} /> },
            ]}
          />
        )}
      </QueryView>
    </>
  );
}
