// Sign-in: single sign-on when configured, and how to get a one-time link otherwise. Says why the
// last attempt did not sign anyone in.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useEffect } from "react";
import { useSearchParams } from "react-router";
import { QueryView, StandalonePage } from "../../components/States";
import { rememberReturnPath } from "../../return-path";

const reasons: Record<string, { text: string; tone: "error" | "info" }> = {
  not_a_member: {
    text: "No Testrun organization has a member with your email address. Ask an admin of your organization to add you.",
    tone: "error",
  },
  oidc_failed: { text: "Sign-in with your identity provider did not complete. Try again.", tone: "error" },
  link_invalid: {
    text: "This sign-in link is not valid: it was already used, it expired (links last 15 minutes), or it was mistyped. Ask for a new one.",
    tone: "error",
  },
  // The console knows only that this browser's session no longer lives (api.ts, sessionEnded).
  session_ended: {
    text: "Your session ended: you signed out (perhaps in another browser), it expired, or an admin removed you or changed your membership. Sign in again to continue where you were.",
    tone: "info",
  },
  signed_out: { text: "You are signed out.", tone: "info" },
  signed_out_everywhere: {
    text: "You are signed out in every browser that was signed in as you.",
    tone: "info",
  },
};

export function SignIn() {
  const [params] = useSearchParams();
  const options = useQuery(ConsoleService.method.getSignInOptions, {});
  const error = params.get("error") ?? "";
  const reason = reasons[error];
  const next = params.get("next") ?? "/";
  // A sign-in link opened later, in another tab, brings the person back here.
  useEffect(() => rememberReturnPath(next), [next]);
  return (
    <StandalonePage title={error === "not_a_member" ? "Not a member of any organization" : "Sign in"}>
      {reason && (
        <p className={`notice notice-${reason.tone}`} role={reason.tone === "error" ? "alert" : "status"}>
          {reason.text}
        </p>
      )}
      <QueryView query={options} what="sign-in options">
        {(data) =>
          data.oidcEnabled && (
            <a
              className="button button-primary button-wide"
              href={`/auth/oidc/start?next=${encodeURIComponent(next)}`}
            >
              Sign in with {data.oidcProvider}
            </a>
          )
        }
      </QueryView>
      <div className="auth-help">
        <h2>{options.data?.oidcEnabled ? "No account at the provider?" : "Signing in"}</h2>
        <p>
          Ask an admin of your organization for a <strong>one-time sign-in link</strong> for the email address
          you were added with (whoever runs your Testrun installation makes it). It works once, within 15
          minutes.
        </p>
      </div>
    </StandalonePage>
  );
}
