// Quarantines a test case (Editors and above): a reason (one line, at most 300 characters) and how
// many days (default 14, at most 90). RunsService checks both and says what is wrong.
import { useMutation } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { NumberField, TextField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";

export const defaultQuarantineDays = 14;
export const maxQuarantineDays = 90;

export function QuarantineDialog({
  projectId,
  testCaseId,
  name,
  open,
  onClose,
  onDone,
}: {
  projectId: string;
  testCaseId: string;
  name: string;
  open: boolean;
  onClose: () => void;
  onDone: (text: string) => void;
}) {
  const invalidate = useInvalidate();
  const [reason, setReason] = useState("");
  const [days, setDays] = useState(String(defaultQuarantineDays));
  const quarantine = useMutation(ConsoleService.method.quarantineTestCase);
  const n = Number(days);
  const daysError =
    days && (!Number.isInteger(n) || n < 1 || n > maxQuarantineDays)
      ? `From 1 to ${maxQuarantineDays} days.`
      : undefined;
  const close = () => {
    quarantine.reset();
    onClose();
  };
  return (
    <Dialog title={`Quarantine ${name}?`} open={open} onClose={close}>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          quarantine.mutate(
            { projectId, testCaseId, reason: reason.trim(), days: n || defaultQuarantineDays },
            {
              onSuccess: async () => {
                await Promise.all([
                  invalidate(ConsoleService.method.getTestCaseHistory),
                  invalidate(ConsoleService.method.listTestHealth),
                ]);
                setReason("");
                onDone(`${name} quarantined for ${n || defaultQuarantineDays} days.`);
              },
            },
          );
        }}
      >
        <p>
          Its failures stop failing the runs started from now on until it is lifted or expires. It still runs
          and its results are kept.
        </p>
        <TextField label="Reason" required maxLength={300} value={reason} onChange={setReason} />
        <NumberField
          label="Days"
          hint={`At most ${maxQuarantineDays}.`}
          error={daysError}
          value={days}
          onChange={setDays}
        />
        <ErrorNotice error={quarantine.error} />
        <DialogActions
          onCancel={close}
          label="Quarantine"
          busyLabel="Quarantining…"
          busy={quarantine.isPending}
          disabled={!reason.trim() || Boolean(daysError)}
        />
      </form>
    </Dialog>
  );
}
