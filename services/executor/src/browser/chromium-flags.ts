// How chromium is launched and its contexts made so that the egress guard holds for browsers
// (docs/runs.md, "Egress"): every request a page makes goes through the executor's egress proxy
// (egress-proxy.ts), and nothing leaves the browser any other way. Two locks, each enough alone
// for loopback (the test checks each): the proxy takes everything, loopback included, and
// chromium can resolve no address but the proxy's, so a connection around it goes nowhere. Each
// switch below was checked against Debian's chromium 156 by test/browser-egress.test.ts.
import type { BrowserContextOptions, LaunchOptions } from "playwright-core";
import type { EgressProxy } from "./egress-proxy.js";

/**
 * The one bypass rule, `<-loopback>`: chromium sends localhost, 127.0.0.0/8, [::1],
 * 169.254.0.0/16 and fe80::/10 around any proxy (its implicit bypass rules); this rule removes
 * them all, so those go to the proxy too, which refuses them. Playwright adds it on its own unless
 * PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK is set or the bypass names a loopback host;
 * giving it here depends on neither.
 */
export const proxyBypass = "<-loopback>";

/**
 * The name chromium knows the proxy by, mapped to its address by the resolver rule below: the
 * address itself must stay unresolvable, or a connection around the proxy could reach whatever
 * listens on it (`EXCLUDE 127.0.0.1` would open every local service on 127.0.0.1). `.invalid`
 * never resolves anywhere else (RFC 6761).
 */
const proxyName = "egress-proxy.testrun.invalid";

/** The proxy's URL with its host replaced by proxyName. */
function proxyServerByName(server: string): string {
  const url = new URL(server);
  url.hostname = proxyName;
  return url.origin;
}

/**
 * Switches that close the ways around the proxy:
 * - `--webrtc-ip-handling-policy=disable_non_proxied_udp`: WebRTC sends no UDP (STUN, TURN over
 *   UDP, peer traffic) and offers no host candidate, so neither a local address nor a packet
 *   leaves; only TURN over TCP is left, and that goes through the proxy like any CONNECT.
 *   (Chromium reads this switch into its WebRTC policy; `--force-webrtc-ip-handling-policy` is
 *   not in this build.)
 * - `--host-resolver-rules=MAP <proxyName> <proxy address> , MAP * ~NOTFOUND`: chromium resolves
 *   nothing itself but the proxy's name, IP literals included (the proxy resolves, through the
 *   guard), so no DNS query leaves the browser and a connection that went around the proxy would
 *   find no address (Playwright does the like behind a SOCKS proxy).
 * - `--disable-quic`: HTTP/3 is UDP, which an HTTP proxy does not carry; chromium already avoids it
 *   while a proxy is set (WebTransport, QUIC too, fails then), and this keeps it off should the
 *   proxy settings ever be wrong.
 * - `--disable-background-networking`, `--disable-component-update`: nothing fetched for the
 *   browser itself (Playwright's defaults say the same; repeated so as not to depend on them).
 */
export function egressSwitches(proxyServer: string): string[] {
  return [
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    `--host-resolver-rules=MAP ${proxyName} ${new URL(proxyServer).hostname} , MAP * ~NOTFOUND`,
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
  ];
}

/**
 * `chromium.launch` options: the egress proxy (by proxyName) with its credentials and no bypass,
 * the egress switches, headless. The sandbox is the pool's (browser/sandbox.ts). Callers may add
 * `args` of their own after these, never `--proxy-*`, `--host-resolver-rules` nor `--webrtc-*`.
 * Contexts use this proxy unless browserContextOptions gives them their own.
 */
export function browserLaunchOptions(proxy: ProxyAccess, executablePath: string): LaunchOptions {
  return {
    executablePath,
    headless: true,
    proxy: proxySettings(proxy),
    args: egressSwitches(proxy.server),
  };
}

type ProxyAccess = Pick<EgressProxy, "server" | "username" | "password">;

/** Playwright's `proxy` option for one of our proxies: by name, with its credentials, no bypass. */
function proxySettings(proxy: ProxyAccess) {
  return {
    server: proxyServerByName(proxy.server),
    username: proxy.username,
    password: proxy.password,
    bypass: proxyBypass,
  };
}

/**
 * `browser.newContext` options every test's context starts from: downloads refused (chromium
 * cancels them, so nothing a page sends is written to the executor's disk) and service workers
 * blocked (their requests still go through the proxy, but Playwright does not see them, so the
 * trace and the failed-requests list would miss them).
 *
 * With `proxy`, the context goes through that proxy instead of the launch's: a proxy per test
 * keeps one test's page from using up the connections (maxTargetConnections) of the tests it
 * shares the browser with. It must listen where the launch's proxy does (startEgressProxy always
 * listens on 127.0.0.1): chromium resolves the proxy's name to that address only.
 */
export function browserContextOptions(proxy?: ProxyAccess): BrowserContextOptions {
  return {
    acceptDownloads: false,
    serviceWorkers: "block",
    ...(proxy ? { proxy: proxySettings(proxy) } : {}),
  };
}

/** A `goto` target that is not a web page. */
export class NotAWebUrl extends Error {
  constructor(readonly target: string) {
    super(`only http: and https: URLs can be opened, not ${JSON.stringify(target.slice(0, 100))}`);
    this.name = "NotAWebUrl";
  }
}

/**
 * The URL a `goto` opens: `target` (a path under the environment's base URL, or an absolute URL)
 * resolved against `baseUrl`, refused unless it is http: or https:. A page cannot open `file:` or
 * `chrome:` URLs itself (chromium refuses them to web content, links, redirects and frames alike),
 * but `page.goto` can: every navigation the executor starts goes through here first.
 */
export function navigationUrl(target: string, baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(target, baseUrl);
  } catch {
    throw new NotAWebUrl(target);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new NotAWebUrl(target);
  return url;
}
