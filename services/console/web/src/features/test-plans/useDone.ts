// What the plan editor or the delete dialog left for the page they went to (in the location's state).
import { useLocation } from "react-router";

/** What the editor or the delete dialog left for the page they went to. */
export const useDone = () => useLocation().state as { saved?: string; deleted?: string } | null;
