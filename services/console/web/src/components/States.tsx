// What a page shows while it loads, when it has nothing, and when it failed.
import type { ReactNode } from "react";
import { Link } from "react-router";
import { messageOf } from "../api";

export function Loading({ what }: { what: string }) {
  return (
    <div className="state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      Loading {what}…
    </div>
  );
}

export function Failed({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div className="state state-error" role="alert">
      <p>{messageOf(error)}</p>
      {retry && (
        <button type="button" className="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** What a query reads, as far as showing it goes (a TanStack Query result is one). */
interface Query<T> {
  isPending: boolean;
  error: unknown;
  data: T | undefined;
  refetch: () => unknown;
}

/**
 * The one way to show what a query read: "Loading {what}…" while it loads, the failure with "Try
 * again", then `empty` when `isEmpty` says there is nothing, else `children` with the data. Without
 * children it shows only loading and failure (a page's early return before it uses the data).
 */
export function QueryView<T>({
  query,
  what,
  isEmpty,
  empty,
  children,
}: {
  query: Query<T>;
  what: string;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children?: (data: T) => ReactNode;
}) {
  const { data } = query;
  return (
    <>
      {query.isPending && <Loading what={what} />}
      {query.error ? <Failed error={query.error} retry={() => void query.refetch()} /> : null}
      {data !== undefined && (isEmpty?.(data) ? empty : children?.(data))}
    </>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <p className="state-title">{title}</p>
      {children}
    </div>
  );
}

/** The same page for an unknown id and for something the person may not see. */
export function NotFound({ what = "Page" }: { what?: string }) {
  return (
    // Rendered inside the frame's <main>: a section, not a second main landmark.
    <section className="narrow-page" aria-labelledby="not-found-title">
      <h1 id="not-found-title">{what} not found</h1>
      <p>It does not exist, or it belongs to an organization you are not a member of.</p>
      <p>
        <Link to="/">Go to your projects</Link>
      </p>
    </section>
  );
}

/** A page of its own, outside the frame (no session yet): the brand, a heading, the content. */
export function StandalonePage({ title, children }: { title?: string; children: ReactNode }) {
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <p className="brand brand-large">
          <img src="/favicon.svg" alt="" width="32" height="32" />
          Testrun
        </p>
        {title && <h1>{title}</h1>}
        {children}
      </div>
    </main>
  );
}
