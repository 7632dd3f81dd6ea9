// The page a one-time sign-in link opens. The token is in the URL fragment (never sent to a server
// or a Referer) and is dropped from the address bar at once. Nothing is used on load: the page says
// whom the link signs in, in which organization, and waits for a click, so a link opened by a mail
// scanner, or sent by someone else to sign a victim in as them, signs nobody in unnoticed.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useEffect, useState } from "react";
import { Link } from "react-router";
import { StandalonePage } from "../../components/States";
import { takeReturnPath } from "../../return-path";

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

interface LinkPreview {
  memberId: string;
  email: string;
  displayName: string;
  organizationId: string;
  organizationName: string;
}

const failureOf = (status: number): Failure => (status >= 500 || status === 429 ? "trouble" : "invalid");

const post = (path: string, token: string) =>
  fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }),
    credentials: "same-origin",
  });

/** The token, read once from the fragment, which is then cleared (history, screenshots, shoulders). */
function useLinkToken(): string {
  const [token] = useState(() => window.location.hash.slice(1));
  useEffect(() => window.history.replaceState(null, "", window.location.pathname), []);
  return token;
}

export function SignInLink() {
  const token = useLinkToken();
  const [failure, setFailure] = useState<Failure | undefined>(token ? undefined : "invalid");
  const [preview, setPreview] = useState<LinkPreview>();
  const [signingIn, setSigningIn] = useState(false);
  // Who this browser is signed in as now, if anyone: "nobody" is an answer (signedIn false), not an
  // error, so a visitor not signed in yet sees no failed request. Should it fail, nobody it is.
  const current = useQuery(ConsoleService.method.getSession, {}, { retry: false });
  const signedIn = current.data?.signedIn ? current.data : undefined;

  useEffect(() => {
    if (!token) return;
    post("/auth/link/preview", token)
      .then(async (answer) => {
        if (answer.ok) setPreview((await answer.json()) as LinkPreview);
        else setFailure(failureOf(answer.status));
      })
      .catch(() => setFailure("trouble"));
  }, [token]);

  const signIn = () => {
    setSigningIn(true);
    post("/auth/link", token)
      .then((answer) => {
        if (answer.status === 204) window.location.assign(takeReturnPath());
        else setFailure(failureOf(answer.status));
      })
      .catch(() => setFailure("trouble"))
      .finally(() => setSigningIn(false));
  };

  if (failure)
    return (
      <StandalonePage title={failures[failure].title}>
        <p className="notice notice-error" role="alert">
          {failures[failure].text}
        </p>
        <Link className="button" to="/sign-in">
          Other ways to sign in
        </Link>
      </StandalonePage>
    );
  if (!preview || current.isPending)
    return (
      <StandalonePage>
        <p role="status">
          <span className="spinner" aria-hidden="true" /> Reading the sign-in link…
        </p>
      </StandalonePage>
    );
  const signedInAs = signedIn?.email;
  // Anything but exactly the link's member (another member, another organization with the same
  // email, more organizations than the link's) is someone else's session, which continuing ends.
  const covered = signedIn?.memberships ?? [];
  const someoneElse =
    signedIn !== undefined &&
    !(
      covered.length === 1 &&
      covered[0]?.member?.id === preview.memberId &&
      covered[0]?.organization?.id === preview.organizationId
    );
  return (
    <StandalonePage title={`Sign in as ${preview.displayName}?`}>
      <p>
        This link signs you in as <strong>{preview.displayName}</strong> ({preview.email}) in the organization{" "}
        <strong>{preview.organizationName}</strong>, and only there.
      </p>
      {someoneElse && (
        <p className="notice notice-warning" role="alert">
          This browser is signed in as <strong>{signedInAs}</strong> in{" "}
          {covered.length === 1 ? "the organization" : "the organizations"}{" "}
          <strong>{covered.map((m) => m.organization?.name).join(", ")}</strong>. Continuing signs that
          session out. If you did not ask for this link, close this page.
        </p>
      )}
      <div className="dialog-actions">
        <button type="button" className="button button-primary" disabled={signingIn} onClick={signIn}>
          Sign in as {preview.displayName}
        </button>
        <Link className="button button-quiet" to="/">
          Cancel
        </Link>
      </div>
    </StandalonePage>
  );
}
