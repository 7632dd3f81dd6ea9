// What a test case page says after a change made here or on the page before (the editor's save,
// a duplicate, a delete pass it in the location's state); shown by DoneNotice (ListPage.tsx).
import { useState } from "react";
import { useLocation } from "react-router";

/** The notice to show: one set here, else the one passed in the location. */
export function useNotice(): [string | undefined, (notice: string | undefined) => void] {
  const passed = (useLocation().state as { notice?: string } | null)?.notice;
  const [notice, setNotice] = useState<string>();
  return [notice ?? passed, setNotice];
}
