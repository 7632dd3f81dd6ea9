// The list-page pattern: which dialog is open (`editing`), the message a finished change leaves
// (`done`, shown by DoneNotice), and the delete dialog. How to use:
//
//   type Editing = { kind: "create" } | { kind: "delete"; webhook: Webhook };
//   const list = useListPage<Editing>({ onOpen: () => pause.reset() });  // onOpen: clear row actions' errors
//   <button onClick={() => list.open({ kind: "create" })}>New webhook</button>
//   <DoneNotice done={list.done} />
//   {list.editing?.kind === "create" && <CreateDialog onClose={list.close} onSaved={list.say} />}
//   <DeleteDialog
//     method={ConsoleService.method.deleteWebhook}
//     item={list.editing?.kind === "delete" ? list.editing.webhook : undefined}
//     request={(w) => ({ projectId, webhookId: w.id })}
//     invalidates={[ConsoleService.method.listWebhooks]}
//     title={() => "Delete this webhook?"}
//     label="Delete webhook"
//     deleted={() => "Webhook deleted."}
//     onClose={list.close}
//     onDeleted={list.say}
//   >
//     {(w) => <p>…</p>}
//   </DeleteDialog>
import type { DescMessage, DescMethod, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { type ReactNode, useState } from "react";
import { Dialog, DialogActions, ErrorNotice } from "./Dialog";
import { useInvalidate } from "./useInvalidate";

export function useListPage<Editing>({ onOpen }: { onOpen?: () => void } = {}) {
  const [editing, setEditing] = useState<Editing>();
  const [done, setDone] = useState<string>();
  return {
    editing,
    done,
    /** Opens a dialog: the last message and the errors of row actions go. */
    open: (next: Editing) => {
      setDone(undefined);
      onOpen?.();
      setEditing(next);
    },
    close: () => setEditing(undefined),
    /** Shows what a change did (or nothing: `say(undefined)`). */
    say: setDone as (message: string | undefined) => void,
  };
}

/**
 * A row's action button: its words, and for screen readers the words and the item they act on
 * ("Delete staging"), since a list holds many buttons with the same words.
 */
export function RowAction({
  action,
  item,
  danger = false,
  onClick,
}: {
  action: string;
  item: string;
  danger?: boolean;
  onClick: () => void;
}) {
  return (
    <button
      type="button"
      className={`button button-small${danger ? " button-danger" : ""}`}
      aria-label={`${action} ${item}`}
      onClick={onClick}
    >
      {action}
    </button>
  );
}

/** The message a finished change leaves above the list, announced politely. */
export function DoneNotice({ done }: { done: string | undefined }) {
  if (!done) return null;
  return (
    <p className="notice notice-info" role="status">
      {done}
    </p>
  );
}

/**
 * Asks before deleting `item` (open while there is one), deletes it, refreshes the queries it
 * named, says what went and closes; a refusal shows in the dialog.
 */
export function DeleteDialog<I extends DescMessage, O extends DescMessage, T>({
  method,
  item,
  request,
  invalidates,
  title,
  label,
  busyLabel = "Deleting…",
  deleted,
  onClose,
  onDeleted,
  children,
}: {
  method: DescMethodUnary<I, O>;
  item: T | undefined;
  request: (item: T) => MessageInitShape<I>;
  invalidates: DescMethod[];
  title: (item: T) => string;
  label: string;
  busyLabel?: string;
  /** What to say once it is gone. */
  deleted: (item: T) => string;
  onClose: () => void;
  onDeleted: (message: string) => void;
  /** What deleting it does, above the buttons. */
  children: (item: T) => ReactNode;
}) {
  const invalidate = useInvalidate();
  const remove = useMutation(method);
  const close = () => {
    remove.reset();
    onClose();
  };
  return (
    <Dialog title={item === undefined ? "" : title(item)} open={item !== undefined} onClose={close}>
      {item !== undefined && (
        <div className="stack">
          {children(item)}
          <ErrorNotice error={remove.error} />
          <DialogActions
            onCancel={close}
            label={label}
            busyLabel={busyLabel}
            busy={remove.isPending}
            danger
            onConfirm={() =>
              remove.mutate(request(item), {
                onSuccess: async () => {
                  await invalidate(...invalidates);
                  onDeleted(deleted(item));
                  close();
                },
              })
            }
          />
        </div>
      )}
    </Dialog>
  );
}
