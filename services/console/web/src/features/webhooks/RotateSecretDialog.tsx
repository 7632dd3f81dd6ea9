import { useMutation } from "@connectrpc/connect-query";
import type { Webhook } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { useInvalidate } from "../../components/useInvalidate";

/** Asks before making a new signing secret (the old one signs beside it for 24 hours). */
export function RotateSecretDialog({
  projectId,
  webhook,
  onClose,
  onRotated,
}: {
  projectId: string;
  webhook: Webhook | undefined;
  onClose: () => void;
  onRotated: (webhook: Webhook, secret: string) => void;
}) {
  const invalidate = useInvalidate();
  const rotate = useMutation(ConsoleService.method.rotateWebhookSecret);
  const close = () => {
    rotate.reset();
    onClose();
  };
  return (
    <Dialog title="Rotate the signing secret?" open={webhook !== undefined} onClose={close}>
      <div className="stack">
        <p>
          A new secret is made and shown once. The current one keeps signing beside it for 24 hours, so your
          receiver can switch without missing a delivery.
        </p>
        <ErrorNotice error={rotate.error} />
        <DialogActions
          onCancel={close}
          label="Rotate secret"
          busyLabel="Rotating…"
          busy={rotate.isPending}
          onConfirm={() =>
            rotate.mutate(
              { projectId, webhookId: webhook?.id ?? "" },
              {
                onSuccess: async (answer) => {
                  // The list shows until when the previous secret signs.
                  await invalidate(ConsoleService.method.listWebhooks);
                  rotate.reset();
                  if (answer.webhook) onRotated(answer.webhook, answer.secret);
                  else onClose();
                },
              },
            )
          }
        />
      </div>
    </Dialog>
  );
}
