// Where a person goes after signing in with a one-time link. The link is made elsewhere (by an
// admin, on a terminal) and opens in a new tab, so the page they were sent to sign in from is
// remembered in this browser for a while, not carried in the link.

const storageKey = "testrun.returnPath";
/** A remembered page older than this is stale: the person has moved on. */
const freshForMs = 30 * 60_000;

/** Remembers the console page to come back to after sign-in (only a page of this console). */
export function rememberReturnPath(path: string): void {
  const target = sameOriginPath(path);
  try {
    if (target && target !== "/")
      localStorage.setItem(storageKey, JSON.stringify({ path: target, at: Date.now() }));
  } catch {
    // Storage refused (private mode, quota): the person lands on the home page instead.
  }
}

/** The remembered page, once (it is forgotten as it is taken); "/" when none is fresh. */
export function takeReturnPath(): string {
  try {
    const stored = localStorage.getItem(storageKey);
    localStorage.removeItem(storageKey);
    const { path, at } = JSON.parse(stored ?? "null") ?? {};
    if (typeof path !== "string" || typeof at !== "number" || Date.now() - at > freshForMs) return "/";
    return sameOriginPath(path) ?? "/";
  } catch {
    return "/";
  }
}

/** The path of a URL of this console (never another origin), or undefined. */
function sameOriginPath(candidate: string): string | undefined {
  try {
    const url = new URL(candidate, window.location.origin);
    if (url.origin !== window.location.origin || url.pathname.startsWith("/sign-in")) return undefined;
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return undefined;
  }
}
