import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { plural } from "../../format";

/** What goes with a project, counted from what the person can read. */
export function WhatGoes({ projectId }: { projectId: string }) {
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  const cases = useQuery(ConsoleService.method.listTestCases, { projectId });
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  const variables = useQuery(ConsoleService.method.listVariables, { projectId });
  const keys = useQuery(ConsoleService.method.listApiKeys, { projectId });
  const counted = (n: number | undefined, what: string, truncated = false) =>
    n === undefined ? `its ${what}s` : truncated ? `more than ${plural(n, what)}` : plural(n, what);
  const activeKeys = keys.data?.keys.filter((entry) => entry.key?.state === KeyState.ACTIVE).length;
  return (
    <ul className="consequences">
      <li>
        Deleted with it, for good: {counted(environments.data?.environments.length, "environment")},{" "}
        {counted(plans.data?.testPlans.length, "test plan")},{" "}
        {counted(cases.data?.testCases.length, "test case", cases.data?.truncated)} and{" "}
        {counted(variables.data?.variables.length, "variable")}.
      </li>
      <li>
        {activeKeys === undefined
          ? "Its API keys stop working at once: pipelines and agents using them get 401."
          : activeKeys === 1
            ? "Its 1 active API key stops working at once: pipelines and agents using it get 401."
            : `Its ${plural(activeKeys, "active API key")} stop working at once: pipelines and agents using them get 401.`}
      </li>
      <li>
        Its runs and credit ledger can no longer be opened by anyone, here or through the API. Tests of a run
        still in progress that have not started yet fail.
      </li>
    </ul>
  );
}
