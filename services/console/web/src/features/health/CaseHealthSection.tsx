// A test case's health on its page (docs/console.md, "Test health"): its quarantine (who, when,
// until, why) with Quarantine and Lift for Editors and above, a hint to quarantine a flaky case
// (the console never quarantines by itself), and per environment its latest 50 results.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { HealthState, type Quarantine } from "@testrun/gen/testrun/runs/v1/health_pb";
import { type ReactNode, useState } from "react";
import { ErrorNotice } from "../../components/Dialog";
import { Fact, Facts } from "../../components/Facts";
import { QueryView } from "../../components/States";
import { Time } from "../../components/Time";
import { useInvalidate } from "../../components/useInvalidate";
import { useProject } from "../../project";
import { useRunNames } from "../runs/Runs";
import { EnvironmentHistory } from "./EnvironmentHistory";
import { QuarantineDialog } from "./QuarantineDialog";

export function CaseHealthSection({ testCaseId, name }: { testCaseId: string; name: string }) {
  const { projectId, project, editor } = useProject();
  const [open, setOpen] = useState(false);
  const [notice, setNotice] = useState("");
  const invalidate = useInvalidate();
  const history = useQuery(ConsoleService.method.getTestCaseHistory, { projectId, testCaseId, limit: 1 });
  const quarantines = useQuery(ConsoleService.method.listQuarantines, { projectId, testCaseId });
  const names = useRunNames(projectId);
  const organizationId = project.data?.project?.organizationId ?? "";
  const members = useQuery(
    ConsoleService.method.listMembers,
    { organizationId },
    { enabled: !!organizationId },
  );
  const memberName = (id: string | undefined) =>
    id ? (members.data?.members.find((m) => m.id === id)?.displayName ?? id) : "an operator";
  const lift = useMutation(ConsoleService.method.liftQuarantine);
  const refresh = () =>
    Promise.all([
      invalidate(ConsoleService.method.listQuarantines),
      invalidate(ConsoleService.method.getTestCaseHistory),
    ]);
  const active = quarantines.data?.quarantines.find((q) => q.active);
  const flaky = history.data?.health.some((h) => h.judged === HealthState.FLAKY) ?? false;

  return (
    <section aria-labelledby="health-heading" className="section">
      <div className="page-head">
        <h2 id="health-heading">Health</h2>
        {editor && !active && (
          <button type="button" className="button" onClick={() => setOpen(true)}>
            Quarantine
          </button>
        )}
      </div>
      {notice && (
        <p className="notice notice-info" role="status">
          {notice}
        </p>
      )}
      {active ? (
        <QuarantineFacts
          quarantine={active}
          memberName={memberName}
          lift={
            editor && (
              <button
                type="button"
                className="button"
                disabled={lift.isPending}
                onClick={() =>
                  lift.mutate(
                    { projectId, testCaseId },
                    {
                      onSuccess: async () => {
                        await refresh();
                        setNotice(`${name}'s quarantine lifted.`);
                      },
                    },
                  )
                }
              >
                Lift
              </button>
            )
          }
        />
      ) : (
        flaky && (
          <p className="notice notice-info">
            This test case is flaky: its failures fail runs though it also passes.
            {editor ? " Quarantine it while it is fixed, so its failures stop failing runs." : ""}{" "}
            {editor && (
              <button type="button" className="button button-quiet" onClick={() => setOpen(true)}>
                Quarantine…
              </button>
            )}
          </p>
        )
      )}
      <ErrorNotice error={lift.error} />
      <QueryView
        query={history}
        what="the test case's results"
        isEmpty={(data) => data.health.length === 0}
        empty={<p className="muted">No results yet: its health shows once a run of it has finished.</p>}
      >
        {(data) =>
          data.health.map((health) => (
            <EnvironmentHistory
              key={health.environmentId}
              health={health}
              environmentName={
                names.environments.find((e) => e.id === health.environmentId)?.name ?? health.environmentId
              }
            />
          ))
        }
      </QueryView>
      {editor && (
        <QuarantineDialog
          projectId={projectId}
          testCaseId={testCaseId}
          name={name}
          open={open}
          onClose={() => setOpen(false)}
          onDone={async (text) => {
            setOpen(false);
            await refresh();
            setNotice(text);
          }}
        />
      )}
    </section>
  );
}

function QuarantineFacts({
  quarantine,
  memberName,
  lift,
}: {
  quarantine: Quarantine;
  memberName: (id: string | undefined) => string;
  lift: ReactNode;
}) {
  return (
    <section className="panel" aria-label="Quarantine">
      <p>
        <strong>Quarantined:</strong> its failures do not fail runs. {lift}
      </p>
      <Facts>
        <Fact term="Reason">{quarantine.reason}</Fact>
        <Fact term="By">{memberName(quarantine.startedByMemberId)}</Fact>
        <Fact term="Since">
          <Time at={quarantine.startedAt} />
        </Fact>
        <Fact term="Until">
          <Time at={quarantine.expiresAt} />
        </Fact>
      </Facts>
    </section>
  );
}
