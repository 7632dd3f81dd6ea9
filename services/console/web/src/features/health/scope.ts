// The health page's plan and tag filters as test case ids (ListTestHealth takes ids: a plan's are
// its own, a tag's are the cases the catalog lists with it). Undefined while they are read; an
// empty list then means no case, and the page says so rather than listing every case.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";

export function useScopedCaseIds(projectId: string, planId: string, tag: string) {
  const plan = useQuery(
    ConsoleService.method.getTestPlan,
    { projectId, testPlanId: planId },
    { enabled: !!planId },
  );
  const tagged = useQuery(
    ConsoleService.method.listTestCases,
    { projectId, tags: [tag] },
    { enabled: !!tag },
  );
  const planIds = planId ? plan.data?.testPlan?.testCaseIds : [];
  const tagIds = tag ? tagged.data?.testCases.map((c) => c.id) : [];
  if (planIds === undefined || tagIds === undefined)
    return { ids: undefined, error: plan.error ?? tagged.error };
  if (planId && tag) {
    const inPlan = new Set(planIds);
    return { ids: tagIds.filter((id) => inPlan.has(id)), scoped: true, error: null };
  }
  return { ids: planId ? planIds : tagIds, scoped: Boolean(planId || tag), error: null };
}
