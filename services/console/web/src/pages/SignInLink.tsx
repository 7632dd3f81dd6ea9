// The page a one-time sign-in link opens. The token is in the URL fragment (never sent to a server
// or a Referer); it is posted once, then dropped from the address bar.
import { useEffect, useRef, useState } from "react";
import { Link } from "react-router";

export function SignInLink() {
  const [failed, setFailed] = useState(false);
  // The link works once: React's development double effects must not spend it twice.
  const used = useRef(false);
  useEffect(() => {
    if (used.current) return;
    used.current = true;
    const token = window.location.hash.slice(1);
    window.history.replaceState(null, "", window.location.pathname);
    if (!token) {
      setFailed(true);
      return;
    }
    fetch("/auth/link", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
      credentials: "same-origin",
    })
      .then((answer) => (answer.status === 204 ? window.location.assign("/") : setFailed(true)))
      .catch(() => setFailed(true));
  }, []);
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        {failed ? (
          <>
            <h1>Sign-in link not valid</h1>
            <p className="notice notice-error" role="alert">
              This sign-in link is not valid: it was already used, it expired (links last 15 minutes), or it
              was mistyped. Ask for a new one.
            </p>
            <Link className="button" to="/sign-in">
              Other ways to sign in
            </Link>
          </>
        ) : (
          <p role="status">
            <span className="spinner" aria-hidden="true" /> Signing you in…
          </p>
        )}
      </div>
    </main>
  );
}
