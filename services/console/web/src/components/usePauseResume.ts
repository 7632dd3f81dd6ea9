// Pause or resume one thing from a list or its page (a schedule, a webhook) and say so. How to use:
//
//   const pause = usePauseResume(ConsoleService.method.updateWebhook, {
//     isPaused: (w: Webhook) => w.paused,
//     request: (w, paused) => ({ projectId, webhookId: w.id, paused }),
//     said: (w, paused) => (paused ? "Webhook paused: …" : "Webhook resumed: …"),
//     invalidates: [ConsoleService.method.listWebhooks],
//     say: list.say,                       // where the message shows (useListPage's `say`)
//   });
//   <button disabled={pause.isPending} onClick={() => pause.toggle(w)}>{w.paused ? "Resume" : "Pause"}</button>
//   <ErrorNotice error={pause.error} />    // and useListPage({ onOpen: () => pause.reset() })
import type { DescMessage, DescMethod, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { useInvalidate } from "./useInvalidate";

export interface PauseResume<T> {
  /** Whether it is paused now (a toggle resumes it then, else pauses it). */
  isPaused: (item: T) => boolean;
  /** The update that sets `paused`. */
  request: (item: T, paused: boolean) => MessageInitShape<DescMessage>;
  /** What to say once done; `paused` is the new state. */
  said: (item: T, paused: boolean) => string;
  /** The queries the change alters (useInvalidate). */
  invalidates: DescMethod[];
  say: (message: string) => void;
}

export function usePauseResume<I extends DescMessage, O extends DescMessage, T>(
  method: DescMethodUnary<I, O>,
  how: Omit<PauseResume<T>, "request"> & { request: (item: T, paused: boolean) => MessageInitShape<I> },
) {
  const invalidate = useInvalidate();
  const update = useMutation(method);
  return {
    isPending: update.isPending,
    error: update.error,
    reset: update.reset,
    toggle: (item: T) => {
      const paused = !how.isPaused(item);
      update.mutate(how.request(item, paused), {
        onSuccess: async () => {
          await invalidate(...how.invalidates);
          how.say(how.said(item, paused));
        },
      });
    },
  };
}
