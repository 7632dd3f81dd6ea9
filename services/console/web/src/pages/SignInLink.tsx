// The page a one-time sign-in link opens. The token is in the URL fragment (never sent to a server
// or a Referer); it is posted once, then dropped from the address bar.
import { useEffect, useRef, useState } from "react";
import { Link } from "react-router";
import { StandalonePage } from "../components/States";
import { takeReturnPath } from "../return-path";

/** invalid: the console refused the token (400, 401, 410). trouble: it could not answer. */
type Failure = "invalid" | "trouble";

const failures: Record<Failure, { title: string; text: string }> = {
  invalid: {
    title: "Sign-in link not valid",
    text: "This sign-in link is not valid: it was already used, it expired (links last 15 minutes), or it was mistyped. Ask for a new one.",
  },
  trouble: {
    title: "Could not sign you in",
    text: "Testrun could not be reached or had a problem. Open the link again from your message in a moment: it works until it is used or its 15 minutes are over.",
  },
};

export function SignInLink() {
  const [failure, setFailure] = useState<Failure>();
  // The link works once: React's development double effects must not spend it twice.
  const used = useRef(false);
  useEffect(() => {
    if (used.current) return;
    used.current = true;
    const token = window.location.hash.slice(1);
    window.history.replaceState(null, "", window.location.pathname);
    if (!token) {
      setFailure("invalid");
      return;
    }
    fetch("/auth/link", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
      credentials: "same-origin",
    })
      .then((answer) => {
        if (answer.status === 204) window.location.assign(takeReturnPath());
        else setFailure(answer.status >= 500 || answer.status === 429 ? "trouble" : "invalid");
      })
      .catch(() => setFailure("trouble"));
  }, []);
  return (
    <StandalonePage title={failure && failures[failure].title}>
      {failure ? (
        <>
          <p className="notice notice-error" role="alert">
            {failures[failure].text}
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
    </StandalonePage>
  );
}
