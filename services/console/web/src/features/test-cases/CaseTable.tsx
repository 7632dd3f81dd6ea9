// Test cases as a table: the project's list, and a plan's cases in run order (test-plans/).
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { DataTable } from "../../components/DataTable";
import { Time } from "../../components/Time";
import { useProject } from "../../project";
import { EnabledBadge } from "./EnabledBadge";
import { Tags } from "./Tags";

export function CaseTable({
  testCases,
  numbered = false,
  actions,
}: {
  testCases: TestCase[];
  numbered?: boolean;
  /** Buttons of a row (Editors and above). */
  actions?: (testCase: TestCase) => ReactNode;
}) {
  const { path } = useProject();
  return (
    <DataTable
      rows={testCases}
      columns={[
        numbered && { label: "#", cell: (_, i) => i + 1 },
        {
          label: "Name",
          className: "cell-strong",
          cell: (testCase) => <Link to={path(`/test-cases/${testCase.id}`)}>{testCase.name}</Link>,
        },
        { label: "Tags", cell: (testCase) => <Tags tags={testCase.tags} /> },
        { label: "State", cell: (testCase) => <EnabledBadge enabled={testCase.enabled} /> },
        { label: "Changed", cell: (testCase) => <Time at={testCase.updatedAt ?? testCase.createdAt} /> },
      ]}
      actions={actions}
    />
  );
}
