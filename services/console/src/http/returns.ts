/**
 * Where to send the browser after sign-in: a path of the console only. Anything else (another
 * origin, a protocol-relative `//host`, a backslash trick, control characters) becomes "/", so a
 * crafted sign-in link cannot forward a fresh session to someone else's site.
 */
export function safeReturnPath(candidate: string | undefined | null): string {
  if (!candidate?.startsWith("/") || candidate.startsWith("//") || candidate.includes("\\")) return "/";
  const printable = [...candidate].every((char) => char.charCodeAt(0) >= 0x20 && char.charCodeAt(0) !== 0x7f);
  return printable && candidate.length <= 2000 ? candidate : "/";
}
