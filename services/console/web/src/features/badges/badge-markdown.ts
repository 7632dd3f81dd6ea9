import type { Badge } from "@testrun/gen/testrun/automation/v1/automation_pb";

/**
 * The Markdown a README embeds: the badge, linking to the plan's runs on the environment in the
 * console (the badge's own origin is the console's APP_URL).
 */
export function badgeMarkdown(badge: Badge): string {
  const runs = `${new URL(badge.url).origin}/projects/${badge.projectId}/runs?plan=${badge.testPlanId}&environment=${badge.environmentId}`;
  return `[![tests](${badge.url})](${runs})`;
}
