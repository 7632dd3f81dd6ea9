// What changed around the tests between the base and the run, before the tests themselves: the
// environment's base URL, the variables' names (never their values: CompareRuns has only names),
// the plan's test cases added or removed, and how many test cases ran another version.
import type { CompareRunsResponse } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Fragment, type ReactNode } from "react";
import { Link } from "react-router";
import { plural } from "../../format";
import { useProject } from "../../project";

/** Items in a sentence, separated by commas. */
function Listed({ items }: { items: { key: string; node: ReactNode }[] }) {
  return (
    <span className="compare-names">
      {items.map(({ key, node }, i) => (
        <Fragment key={key}>
          {i > 0 && ", "}
          {node}
        </Fragment>
      ))}
    </span>
  );
}

const Names = ({ names }: { names: readonly string[] }) => (
  <Listed items={names.map((name) => ({ key: name, node: <code>{name}</code> }))} />
);

export function AroundTheTests({ comparison }: { comparison: CompareRunsResponse }) {
  const { path } = useProject();
  const c = comparison;
  const nameOf = (id: string) => c.tests.find((t) => t.testCaseId === id)?.name || id;
  const cases = (ids: readonly string[]) => (
    <Listed
      items={ids.map((id) => ({ key: id, node: <Link to={path(`/test-cases/${id}`)}>{nameOf(id)}</Link> }))}
    />
  );
  const versions = c.tests.filter(
    (t) => t.caseVersion && t.baseCaseVersion && t.caseVersion !== t.baseCaseVersion,
  ).length;
  const items = [
    (c.baseUrlBefore || c.baseUrlAfter) && (
      <li key="url">
        Base URL: <code className="break">{c.baseUrlBefore || "(none)"}</code> →{" "}
        <code className="break">{c.baseUrlAfter || "(none)"}</code>
      </li>
    ),
    c.variablesAdded.length > 0 && (
      <li key="vars-added">
        {plural(c.variablesAdded.length, "variable")} added: <Names names={c.variablesAdded} />
      </li>
    ),
    c.variablesRemoved.length > 0 && (
      <li key="vars-removed">
        {plural(c.variablesRemoved.length, "variable")} removed: <Names names={c.variablesRemoved} />
      </li>
    ),
    c.casesAdded.length > 0 && (
      <li key="cases-added">
        {plural(c.casesAdded.length, "test case")} added: {cases(c.casesAdded)}
      </li>
    ),
    c.casesRemoved.length > 0 && (
      <li key="cases-removed">
        {plural(c.casesRemoved.length, "test case")} removed: {cases(c.casesRemoved)}
      </li>
    ),
    versions > 0 && (
      <li key="versions">
        {plural(versions, "test case")} ran another version (the steps that differ are under each test below)
      </li>
    ),
  ].filter(Boolean);
  return (
    <section className="section panel compare-around" aria-labelledby="around-heading">
      <h2 id="around-heading">What changed around the tests</h2>
      {items.length ? (
        <ul>{items}</ul>
      ) : (
        <p className="muted">
          Nothing: the same base URL, the same variables and the same test cases, each at the same version.
        </p>
      )}
    </section>
  );
}
