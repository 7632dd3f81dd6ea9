// A project's failures (docs/console.md, "Failures"): failed attempts grouped by how they failed
// (the step, its target, the cause and the masked message), the open and reopened groups by impact
// (the most cases, then the most occurrences), resolved ones behind a filter. Pages are read with
// ListFailureGroups' cursor; the state filter is in the URL.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { FailureGroup } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link, useSearchParams } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { SelectField } from "../../components/Inputs";
import { Pager, usePageToken } from "../../components/Pager";
import { Empty, NotFound, QueryView } from "../../components/States";
import { useProject } from "../../project";
import { causeName } from "../runs/Attempts";
import { seenText, stateFilters, stepText } from "./failure-format";
import { GroupStateBadge, Seen } from "./parts";

export function FailureGroups() {
  const { projectId, project, name } = useProject();
  const [params, setParams] = useSearchParams();
  const pages = usePageToken();
  const filter = stateFilters.find((f) => f.param === (params.get("state") ?? "")) ?? stateFilters[0];
  const groups = useQuery(
    ConsoleService.method.listFailureGroups,
    { projectId, states: [...filter.states], cursor: pages.token },
    { placeholderData: keepPreviousData },
  );
  if (isNotFound(project.error) || isNotFound(groups.error)) return <NotFound what="Project" />;
  const choose = (value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set("state", value);
    else next.delete("state");
    next.delete("page");
    setParams(next);
  };

  return (
    <>
      <p className="eyebrow">{name}</p>
      <h1>Failures</h1>
      <p className="lead">
        Failed tests grouped by how they failed: the same step, target, cause and message (numbers, ids, times
        and quoted values masked). The groups affecting the most test cases come first.
      </p>
      <search className="filters" aria-label="Filter failures">
        <SelectField label="State" value={filter.param} onChange={choose}>
          {stateFilters.map((f) => (
            <option key={f.param} value={f.param}>
              {f.label}
            </option>
          ))}
        </SelectField>
      </search>
      <QueryView
        query={groups}
        what="failure groups"
        isEmpty={(data) => data.groups.length === 0}
        empty={
          filter.param || pages.later ? (
            <Empty title={`No ${filter.param === "resolved" ? "resolved " : ""}failure groups`}>
              <Link to={{ search: "" }}>Show the open ones</Link>
            </Empty>
          ) : (
            <Empty title="No open failure groups">
              <p>
                When a test fails, its failure joins a group with the failures that failed the same way; a
                group stays here until its test cases pass again.
              </p>
            </Empty>
          )
        }
      >
        {(data) => <GroupTable groups={data.groups} />}
      </QueryView>
      <Pager
        label="Pages of failure groups"
        pages={pages}
        query={{
          data: groups.data && { nextPageToken: groups.data.nextCursor },
          isFetching: groups.isFetching,
        }}
      />
    </>
  );
}

function GroupTable({ groups }: { groups: FailureGroup[] }) {
  const { path } = useProject();
  return (
    <DataTable
      rows={groups}
      columns={[
        {
          label: "State",
          className: "cell-nowrap",
          cell: (g) => <GroupStateBadge state={g.state} />,
        },
        {
          label: "Failure",
          className: "cell-failure",
          cell: (g) => (
            <span className="cell-lines">
              <Link className="failure-message" to={path(`/failures/${g.id}`)}>
                {g.message || "(no message)"}
              </Link>
              <code className="failure-step">{stepText(g)}</code>
              <span className="muted small">{causeName[g.cause]}</span>
            </span>
          ),
        },
        {
          label: "Seen",
          cell: (g) => seenText(g.occurrences, g.casesAffected),
        },
        { label: "First seen", cell: (g) => <Seen occurrence={g.firstSeen} /> },
        { label: "Last seen", cell: (g) => <Seen occurrence={g.lastSeen} /> },
      ]}
    />
  );
}
