// The names of the project's plans and environments, to show beside the ids a schedule holds.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useMemo } from "react";

export function useNames(projectId: string) {
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  return useMemo(
    () => ({
      plans: plans.data?.testPlans ?? [],
      environments: environments.data?.environments ?? [],
      planNames: new Map((plans.data?.testPlans ?? []).map((p) => [p.id, p.name])),
      environmentNames: new Map((environments.data?.environments ?? []).map((e) => [e.id, e.name])),
    }),
    [plans.data, environments.data],
  );
}

export type Names = ReturnType<typeof useNames>;
