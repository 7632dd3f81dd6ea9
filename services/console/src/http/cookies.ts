import { parseCookie, stringifySetCookie } from "cookie";

/**
 * The console's cookies. Over https they are Secure and the session cookie takes the `__Host-`
 * prefix (no Domain, Path=/, Secure: no subdomain can set or read it).
 */
export class ConsoleCookies {
  readonly sessionName: string;
  readonly oidcStateName: string;
  private readonly secure: boolean;

  constructor(appUrl: string) {
    this.secure = appUrl.startsWith("https://");
    this.sessionName = this.secure ? "__Host-testrun_session" : "testrun_session";
    this.oidcStateName = this.secure ? "__Host-testrun_oidc_state" : "testrun_oidc_state";
  }

  read(header: string | undefined, name: string): string | undefined {
    return header ? parseCookie(header)[name] : undefined;
  }

  /** A Set-Cookie value: HttpOnly, SameSite=Lax (a link from a pipeline log still arrives signed in). */
  set(name: string, value: string, maxAgeSeconds: number): string {
    return stringifySetCookie({
      name,
      value,
      httpOnly: true,
      sameSite: "lax",
      secure: this.secure,
      path: "/",
      maxAge: maxAgeSeconds,
    });
  }

  clear(name: string): string {
    return this.set(name, "", 0);
  }
}
