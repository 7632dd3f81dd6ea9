// Who is signed in, for every page inside the app's frame. Without a session (GetSession answers
// "nobody") the browser goes to sign in and comes back (api.ts, goToSignIn).
import { createClient } from "@connectrpc/connect";
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService, type GetSessionResponse } from "@testrun/gen/testrun/console/v1/console_pb";
import { createContext, type ReactNode, useContext, useEffect } from "react";
import { goToSignIn, isSignedOut, leaveTo, transport } from "./api";
import { Failed, Loading, StandalonePage } from "./components/States";

const SessionContext = createContext<GetSessionResponse | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const session = useQuery(ConsoleService.method.getSession, {});
  const nobody = session.data !== undefined && !session.data.signedIn;
  useEffect(() => {
    if (nobody) goToSignIn(undefined, session.data?.sessionEnded);
  }, [nobody, session.data]);
  // A call refused meanwhile (its session ended between two answers) leaves too (main.tsx).
  if (session.isPending || nobody || isSignedOut(session.error))
    return (
      <StandalonePage>
        <Loading what="your session" />
      </StandalonePage>
    );
  if (session.error)
    return (
      <StandalonePage title="Testrun is not answering">
        <Failed error={session.error} retry={() => void session.refetch()} />
      </StandalonePage>
    );
  return <SessionContext.Provider value={session.data}>{children}</SessionContext.Provider>;
}

export function useSession(): GetSessionResponse {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}

export async function signOut(): Promise<void> {
  await fetch("/auth/sign-out", { method: "POST", credentials: "same-origin" });
  leaveTo("/sign-in?error=signed_out");
}

/** Ends every session acting as this person's members (other browsers too), then this browser's cookie. */
export async function signOutEverywhere(): Promise<void> {
  await createClient(ConsoleService, transport).signOutEverywhere({});
  await fetch("/auth/sign-out", { method: "POST", credentials: "same-origin" });
  leaveTo("/sign-in?error=signed_out_everywhere");
}
