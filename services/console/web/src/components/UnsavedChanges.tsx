// Holding a person back from losing an edit: while there are unsaved changes, closing the tab or
// reloading asks the browser's question (beforeunload), and leaving for another page of the
// console (a link, Back) asks ours first.
import { type ReactNode, useEffect, useRef } from "react";
import { useBlocker } from "react-router";
import { Dialog, DialogActions } from "./Dialog";

/**
 * Guards the page while `unsaved`; returns the question to render and `leaveFreely`, to call just
 * before the page itself navigates away after a save.
 */
export function useUnsavedChanges(
  unsaved: boolean,
  what: string,
): { prompt: ReactNode; leaveFreely: () => void } {
  const free = useRef(false);
  useEffect(() => {
    if (!unsaved) return;
    const hold = (event: BeforeUnloadEvent) => {
      if (free.current) return;
      event.preventDefault();
      // Older browsers ask only when returnValue is set.
      event.returnValue = "";
    };
    window.addEventListener("beforeunload", hold);
    return () => window.removeEventListener("beforeunload", hold);
  }, [unsaved]);
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      unsaved && !free.current && currentLocation.pathname !== nextLocation.pathname,
  );
  const blocked = blocker.state === "blocked";
  const prompt = (
    <Dialog title="Leave without saving?" open={blocked} onClose={() => blocker.reset?.()}>
      <div className="stack">
        <p>Your changes to {what} are not saved. If you leave now, they are lost.</p>
        {/* Staying comes first: the dialog's first button has focus, and Enter must not lose the edit. */}
        <DialogActions
          onCancel={() => blocker.reset?.()}
          cancelLabel="Stay and keep editing"
          label="Discard changes and leave"
          busyLabel="Leaving…"
          busy={false}
          danger
          onConfirm={() => blocker.proceed?.()}
        />
      </div>
    </Dialog>
  );
  return {
    prompt,
    leaveFreely: () => {
      free.current = true;
    },
  };
}
