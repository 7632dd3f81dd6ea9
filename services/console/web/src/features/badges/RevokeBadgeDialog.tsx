import { useMutation } from "@connectrpc/connect-query";
import type { Badge } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { useInvalidate } from "../../components/useInvalidate";

/** Asks before a badge's URL stops showing the plan's state. */
export function RevokeBadgeDialog({
  projectId,
  badge,
  environmentName,
  onClose,
}: {
  projectId: string;
  badge: Badge | undefined;
  environmentName: string;
  onClose: () => void;
}) {
  const invalidate = useInvalidate();
  const revoke = useMutation(ConsoleService.method.revokeBadge);
  const close = () => {
    revoke.reset();
    onClose();
  };
  return (
    <Dialog title={`Revoke the ${environmentName} badge?`} open={badge !== undefined} onClose={close}>
      <div className="stack">
        <p>
          Its URL stops showing the plan's state at once: READMEs that embed it show an unknown badge. This
          cannot be undone.
        </p>
        <ErrorNotice error={revoke.error} />
        <DialogActions
          onCancel={close}
          label="Revoke badge"
          busyLabel="Revoking…"
          busy={revoke.isPending}
          danger
          onConfirm={() =>
            revoke.mutate(
              { projectId, badgeId: badge?.id ?? "" },
              {
                onSuccess: async () => {
                  await invalidate(ConsoleService.method.listBadges);
                  close();
                },
              },
            )
          }
        />
      </div>
    </Dialog>
  );
}
