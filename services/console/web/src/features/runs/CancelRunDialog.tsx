import { useMutation } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type Run as RunMessage, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../../components/Dialog";
import { useInvalidate } from "../../components/useInvalidate";
import { plural } from "../../format";

/** Says what cancelling does to each test, by state, before it is done. */
export function CancelRunDialog({
  run,
  open,
  onClose,
  onCancelled,
}: DialogProps & { run: RunMessage; onCancelled: (run: RunMessage | undefined) => void }) {
  const invalidate = useInvalidate();
  const cancel = useMutation(ConsoleService.method.cancelRun);
  const queued = run.tests.filter((t) => t.status === TestStatus.QUEUED).length;
  const running = run.tests.filter((t) => t.status === TestStatus.RUNNING).length;
  const close = () => {
    cancel.reset();
    onClose();
  };
  return (
    <Dialog title={`Cancel “${run.name}”?`} open={open} onClose={close}>
      <div className="stack">
        <ul className="facts">
          <li>
            <strong>Tests not yet started</strong> ({queued}) are skipped, and their{" "}
            {plural(queued, "credit")} refunded.
          </li>
          <li>
            <strong>Tests already running</strong> ({running}) are stopped and their results discarded; their{" "}
            {plural(running, "credit")} {running === 1 ? "is" : "are"} not refunded.
          </li>
          <li>Tests that already passed or failed keep their results. This cannot be undone.</li>
        </ul>
        <ErrorNotice error={cancel.error} />
        <DialogActions
          onCancel={close}
          cancelLabel="Keep running"
          label="Cancel run"
          busyLabel="Cancelling…"
          busy={cancel.isPending}
          danger
          onConfirm={() =>
            cancel.mutate(
              { projectId: run.projectId, runId: run.id },
              {
                onSuccess: (answer) => {
                  // The runs list and the balance (what was not started is refunded); this page follows the run.
                  void invalidate(ConsoleService.method.listRuns, ConsoleService.method.getCredits);
                  cancel.reset();
                  onCancelled(answer.run);
                },
              },
            )
          }
        />
      </div>
    </Dialog>
  );
}
