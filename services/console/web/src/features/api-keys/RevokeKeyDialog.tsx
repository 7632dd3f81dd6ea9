import { useMutation } from "@connectrpc/connect-query";
import { type ApiKeyEntry, ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyKind, KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { useInvalidate } from "../../components/useInvalidate";
import { keyStateName } from "../../format";

/** Revokes a live key, or removes a dead one from the list. */
export function RevokeKeyDialog({
  projectId,
  entry,
  onClose,
}: {
  projectId: string;
  entry: ApiKeyEntry | undefined;
  onClose: () => void;
}) {
  const invalidate = useInvalidate();
  const revoke = useMutation(ConsoleService.method.revokeApiKey);
  const close = () => {
    revoke.reset();
    onClose();
  };
  const active = entry?.key?.state === KeyState.ACTIVE;
  const name = entry?.key?.name ?? "key";
  const token = entry?.key?.kind === KeyKind.CONTENT_TOKEN;
  return (
    <Dialog title={active ? `Revoke ${name}?` : `Remove ${name}?`} open={entry !== undefined} onClose={close}>
      <p>
        {active
          ? token
            ? "Pipelines pushing content with it get 401 on their next push. This cannot be undone."
            : "Pipelines using it get 401 on their next request. This cannot be undone."
          : `It no longer works (${keyStateName[entry?.key?.state ?? KeyState.UNSPECIFIED].toLowerCase()}). Removing revokes it and takes it off the list. This cannot be undone.`}
      </p>
      <ErrorNotice error={revoke.error} />
      <DialogActions
        onCancel={close}
        label={`${active ? "Revoke" : "Remove"} ${token ? "token" : "key"}`}
        busyLabel="Revoking…"
        busy={revoke.isPending}
        danger
        onConfirm={() =>
          revoke.mutate(
            { projectId, keyId: entry?.key?.id ?? "" },
            {
              onSuccess: async () => {
                await invalidate(ConsoleService.method.listApiKeys);
                close();
              },
            },
          )
        }
      />
    </Dialog>
  );
}
