// Pages of a list read with page tokens (ListRuns, GetCredits). The current page's token is in the
// URL (?page=…) so a link opens the same page; the tokens of the pages before it travel in the
// history entry's state, so "Newer" and the back button both return to them.
import { useLocation, useNavigate, useSearchParams } from "react-router";

interface PageState {
  /** Tokens of the pages before the current one, oldest first ("" is the first page). */
  before?: string[];
}

export function usePageToken() {
  const [params] = useSearchParams();
  const location = useLocation();
  const navigate = useNavigate();
  const token = params.get("page") ?? "";
  const before = (location.state as PageState | null)?.before ?? [];
  const go = (next: string, stack: string[]) => {
    const search = new URLSearchParams(params);
    if (next) search.set("page", next);
    else search.delete("page");
    navigate({ search: search.toString() }, { state: { before: stack } satisfies PageState });
  };
  return {
    token,
    /** Whether this is not the first page. */
    later: token !== "",
    older: (nextPageToken: string) => go(nextPageToken, [...before, token]),
    /** Back to the page before (or the first, when the URL was opened on a later page). */
    newer: () => go(before.at(-1) ?? "", before.slice(0, -1)),
  };
}

/** "Newer" and "Older" under a list, newest first. Nothing when there is one page only. */
export function Pager({
  label,
  pages,
  query,
}: {
  label: string;
  pages: ReturnType<typeof usePageToken>;
  /** The list's query: its page's token for the next, and whether a page is being read. */
  query: { data: { nextPageToken: string } | undefined; isFetching: boolean };
}) {
  const nextPageToken = query.data?.nextPageToken;
  const busy = query.isFetching;
  if (!pages.later && !nextPageToken) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" className="button" disabled={!pages.later || busy} onClick={pages.newer}>
        ← Newer
      </button>
      <button
        type="button"
        className="button"
        disabled={!nextPageToken || busy}
        onClick={() => nextPageToken && pages.older(nextPageToken)}
      >
        Older →
      </button>
    </nav>
  );
}
