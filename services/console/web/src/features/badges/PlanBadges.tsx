// A test plan's status badges: one per environment, a public SVG URL for READMEs, with the Markdown
// to copy. Every member sees them; Editors and above create and revoke them (docs/console.md,
// "Badges").
import { useMutation, useQuery } from "@connectrpc/connect-query";
import type { Badge } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useState } from "react";
import { CodeBlock } from "../../components/CopyButton";
import { ErrorNotice } from "../../components/Dialog";
import { SelectField } from "../../components/Inputs";
import { Empty, QueryView } from "../../components/States";
import { Time } from "../../components/Time";
import { useInvalidate } from "../../components/useInvalidate";
import { badgeMarkdown } from "./badge-markdown";
import { RevokeBadgeDialog } from "./RevokeBadgeDialog";

export function PlanBadges({
  projectId,
  testPlanId,
  editor,
}: {
  projectId: string;
  testPlanId: string;
  editor: boolean;
}) {
  const badges = useQuery(ConsoleService.method.listBadges, { projectId });
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  const invalidate = useInvalidate();
  const createBadge = useMutation(ConsoleService.method.createBadge);
  const [environmentId, setEnvironmentId] = useState("");
  const [revoking, setRevoking] = useState<Badge>();
  const envName = new Map((environments.data?.environments ?? []).map((e) => [e.id, e.name]));
  const chosen =
    environmentId ||
    environments.data?.environments.find((e) => e.isDefault)?.id ||
    environments.data?.environments[0]?.id ||
    "";
  const submit = (event: FormEvent) => {
    event.preventDefault();
    createBadge.mutate(
      { projectId, testPlanId, environmentId: chosen },
      { onSuccess: () => void invalidate(ConsoleService.method.listBadges) },
    );
  };
  return (
    <section className="section" aria-labelledby="badges-heading">
      <h2 id="badges-heading">Status badges</h2>
      <p className="muted">
        An image for a README that shows whether this plan's latest run on an environment passed: passing,
        failing or unknown, and nothing else. Anyone with its URL can see it, without signing in; revoke it to
        end that.
      </p>
      <QueryView
        query={badges}
        what="badges"
        isEmpty={(data) => !data.badges.some((b) => b.testPlanId === testPlanId)}
        empty={
          <Empty title="No badges for this plan yet.">{!editor && <p>An Editor creates them.</p>}</Empty>
        }
      >
        {(data) => (
          <ul className="badge-list">
            {data.badges
              .filter((b) => b.testPlanId === testPlanId)
              .map((badge) => (
                <li key={badge.id} className="panel stack">
                  <div className="section-head">
                    <h3 className="badge-env">{envName.get(badge.environmentId) ?? badge.environmentId}</h3>
                    <img src={badge.url} alt="Status badge" height={20} />
                  </div>
                  <CodeBlock
                    label={`Markdown for the ${envName.get(badge.environmentId) ?? ""} badge`}
                    code={badgeMarkdown(badge)}
                  />
                  <p className="small muted">
                    Created <Time at={badge.createdAt} />
                  </p>
                  {editor && (
                    <div>
                      <button
                        type="button"
                        className="button button-small button-danger"
                        onClick={() => setRevoking(badge)}
                      >
                        Revoke badge
                      </button>
                    </div>
                  )}
                </li>
              ))}
          </ul>
        )}
      </QueryView>
      {editor && (
        <form className="row-actions badge-create" onSubmit={submit}>
          <SelectField label="Environment" value={chosen} onChange={setEnvironmentId}>
            {(environments.data?.environments ?? []).map((env) => (
              <option key={env.id} value={env.id}>
                {env.name}
              </option>
            ))}
          </SelectField>
          <button
            type="submit"
            className="button"
            disabled={!chosen || createBadge.isPending}
            aria-busy={createBadge.isPending}
          >
            {createBadge.isPending ? "Creating…" : "Create badge"}
          </button>
        </form>
      )}
      <ErrorNotice error={createBadge.error} />
      <RevokeBadgeDialog
        projectId={projectId}
        badge={revoking}
        environmentName={revoking ? (envName.get(revoking.environmentId) ?? "") : ""}
        onClose={() => setRevoking(undefined)}
      />
    </section>
  );
}
