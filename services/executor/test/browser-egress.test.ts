// The egress guard holds for browsers (docs/runs.md, "Egress"): Debian's chromium, launched as
// the executor launches it (chromium-flags.ts) behind the egress proxy, runs pages served from an
// allowed address (127.0.0.2) that try every way to reach a refused one (127.0.0.1, where the same
// site listens, or 169.254.169.254). Each refusal is checked where it shows: what the page got,
// and that the refused server saw no connection at all.
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { promises as dns } from "node:dns";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EgressGuard, EgressPolicy, parseAllowList, type Resolve } from "@testrun/kit/egress";
import { expect } from "chai";
import { pino } from "pino";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import {
  browserContextOptions,
  browserLaunchOptions,
  NotAWebUrl,
  navigationUrl,
} from "../src/browser/chromium-flags.js";
import { type EgressProxy, type EgressProxyOptions, startEgressProxy } from "../src/browser/egress-proxy.js";
import { startWebTarget, type WebTarget } from "./egress-web-target.js";

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Names under `.test` the tests' guard resolves itself; others (localhost) as executors do. The
 * proxy resolves every name a page uses: chromium resolves none (chromium-flags.ts).
 */
const testNames: Record<string, string[]> = {
  "allowed.test": ["127.0.0.2"],
  "loopback.test": ["127.0.0.1"],
  "mixed.test": ["127.0.0.2", "127.0.0.1"],
};
const resolve: Resolve = async (hostname, family) => {
  const addresses = testNames[hostname];
  if (addresses) return addresses.map((address) => ({ address, family: 4 }));
  return dns.lookup(hostname, { all: true, family: family as 0 | 4 | 6 });
};

/** The executor's guard in these tests: 127.0.0.2 allowed, everything else as by default. */
const guard = () => new EgressGuard(new EgressPolicy({ allow: parseAllowList("127.0.0.2/32") }), { resolve });

/** What the proxy logged, one object a line. */
const logLines: Record<string, unknown>[] = [];
const logger = pino({ level: "debug" }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
const refusals = () => logLines.filter((line) => line.cause === "EGRESS_REFUSED").length;

/** Runs `script` (an expression, awaited) in the page: a string, as the page sees it. */
const inPage = <T>(page: Page, script: string): Promise<T> => page.evaluate<T>(`(async () => (${script}))()`);

/** What a page's fetch of `url` got: "status N: body" or "error: <name>". */
const fetchOutcome = (page: Page, url: string) =>
  inPage<string>(
    page,
    `fetch(${JSON.stringify(url)}).then(async (r) => "status " + r.status + ": " + (await r.text()), (e) => "error: " + e.name)`,
  );

/** The same with XMLHttpRequest: "status N: body" or "error". */
const xhrOutcome = (page: Page, url: string) =>
  inPage<string>(
    page,
    `new Promise((done) => { const x = new XMLHttpRequest(); x.open("GET", ${JSON.stringify(url)});
      x.onload = () => done("status " + x.status + ": " + x.responseText); x.onerror = () => done("error"); x.send(); })`,
  );

/** What a page's WebSocket to `url` got: "message: <text>" or "error". */
const webSocketOutcome = (page: Page, url: string) =>
  inPage<string>(
    page,
    `new Promise((done) => { const ws = new WebSocket(${JSON.stringify(url)});
      ws.onmessage = (e) => { done("message: " + e.data); ws.close(); }; ws.onerror = () => done("error"); })`,
  );

async function udpListener(host: string): Promise<{ socket: UdpSocket; port: number; packets: string[] }> {
  const socket = createSocket("udp4");
  const packets: string[] = [];
  socket.on("message", (message, from) => packets.push(`${message.length} bytes from ${from.address}`));
  socket.bind(0, host);
  await once(socket, "listening");
  return { socket, port: socket.address().port, packets };
}

/**
 * A page's WebRTC offer with a STUN server and a TURN server (UDP) at each of `udp`, and TURN over
 * TCP at `tcp`: the ICE candidates gathered, once gathering is complete.
 */
const iceCandidates = (
  page: Page,
  udp: { host: string; port: number }[],
  tcp: { host: string; port: number },
) =>
  inPage<string[]>(
    page,
    `(async () => {
      const iceServers = ${JSON.stringify([
        ...udp.flatMap(({ host, port }) => [
          { urls: `stun:${host}:${port}` },
          { urls: `turn:${host}:${port}?transport=udp`, username: "u", credential: "p" },
        ]),
        { urls: `turn:${tcp.host}:${tcp.port}?transport=tcp`, username: "u", credential: "p" },
      ])};
      const pc = new RTCPeerConnection({ iceServers });
      const candidates = [];
      const complete = new Promise((done) => {
        pc.onicecandidate = (e) => (e.candidate ? candidates.push(e.candidate.candidate) : done());
      });
      pc.createDataChannel("leak");
      await pc.setLocalDescription(await pc.createOffer());
      await complete;
      pc.close();
      return candidates;
    })()`,
  );

describe("browser egress: chromium behind the egress proxy", function () {
  this.timeout(60_000);
  let allowed: WebTarget;
  let refused: WebTarget;
  let proxy: EgressProxy;
  let browser: Browser;
  let downloads: string;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    [allowed, refused] = await Promise.all([startWebTarget("127.0.0.2"), startWebTarget("127.0.0.1")]);
    proxy = await startEgressProxy(guard(), { logger });
    downloads = mkdtempSync(join(tmpdir(), "testrun-downloads-"));
    // downloadsPath: where Playwright would put an accepted download, so the test can look there.
    browser = await chromium.launch({
      ...browserLaunchOptions(proxy, chromiumPath),
      downloadsPath: downloads,
    });
  });

  after(async () => {
    await browser?.close();
    await proxy?.close();
    await Promise.all([allowed?.close(), refused?.close()]);
    rmSync(downloads, { recursive: true, force: true });
  });

  beforeEach(async () => {
    context = await browser.newContext(browserContextOptions());
    page = await context.newPage();
  });

  afterEach(async () => {
    await context.close();
    // Whatever a test did, nothing of it reached the refused address.
    expect(refused.connections, "connections accepted on 127.0.0.1").to.equal(0);
  });

  it("loads the allowed page with its image, fetches and a WebSocket, so the refusals below are refusals", async () => {
    allowed.pages.set("own", `<h1>own</h1><img id="pixel" src="/pixel.png"><script src="/leak.js"></script>`);
    const response = await page.goto(`${allowed.url}/page/own`);
    expect(response?.status()).to.equal(200);
    expect(await page.textContent("h1")).to.equal("own");
    expect(await inPage<number>(page, `document.getElementById("pixel").naturalWidth`)).to.equal(1);
    expect(await inPage<string>(page, "window.leaked")).to.equal("127.0.0.2");
    expect(await fetchOutcome(page, `${allowed.url}/secret`)).to.equal("status 200: secret of 127.0.0.2");
    expect(await xhrOutcome(page, `${allowed.url}/secret`)).to.equal("status 200: secret of 127.0.0.2");
    expect(await webSocketOutcome(page, `ws://127.0.0.2:${allowed.port}/`)).to.equal(
      "message: hello from 127.0.0.2",
    );
  });

  it("resolves names in the proxy, through the guard: an allowed name loads, one with a refused address does not", async () => {
    const response = await page.goto(`http://allowed.test:${allowed.port}/`);
    expect(await page.textContent("h1")).to.equal("page on 127.0.0.2");
    expect(response?.status()).to.equal(200);
    for (const name of ["loopback.test", "mixed.test"])
      expect(await fetchOutcome(page, `http://${name}:${refused.port}/secret`), name).to.equal(
        "error: TypeError",
      );
  });

  it("(a) a page's fetch and XHR to 169.254.169.254, 127.0.0.1 and localhost get nothing", async () => {
    await page.goto(allowed.url);
    const before = refusals();
    const urls = [
      "http://169.254.169.254/latest/meta-data/",
      `http://127.0.0.1:${refused.port}/secret`,
      `http://localhost:${refused.port}/secret`,
      `http://[::ffff:127.0.0.1]:${refused.port}/secret`,
      `https://127.0.0.1:${refused.port}/secret`,
    ];
    for (const url of urls) {
      expect(await fetchOutcome(page, url), `fetch ${url}`).to.equal("error: TypeError");
      expect(await xhrOutcome(page, url), `XHR ${url}`).to.equal("error");
    }
    // Each was refused by the proxy (not sent around it to fail some other way), and the log says
    // why without saying where.
    expect(refusals() - before).to.be.at.least(urls.length * 2);
    expect(JSON.stringify(logLines)).not.to.match(/127\.0\.0\.1|169\.254|localhost/);
  });

  it("(a) holds with either of its two locks alone: the loopback bypass removed, or chromium's resolver off", async () => {
    const options = browserLaunchOptions(proxy, chromiumPath);
    const byName = options.proxy as NonNullable<typeof options.proxy>;
    const variants = {
      // Chromium's own resolver on (so the proxy is given by address): only the proxy, loopback
      // not bypassed, keeps pages off 127.0.0.1.
      "proxy only": {
        ...options,
        proxy: { ...byName, server: proxy.server },
        args: options.args?.filter((arg) => !arg.startsWith("--host-resolver-rules")),
      },
      // Loopback sent around the proxy (a bypass naming it): chromium finds no address for it.
      "resolver only": { ...options, proxy: { ...byName, bypass: "127.0.0.1,localhost" } },
    };
    for (const [variant, launchOptions] of Object.entries(variants)) {
      const partial = await chromium.launch(launchOptions);
      try {
        const partialPage = await (await partial.newContext(browserContextOptions())).newPage();
        await partialPage.goto(`http://allowed.test:${allowed.port}/`);
        expect(await partialPage.textContent("h1"), variant).to.equal("page on 127.0.0.2");
        for (const url of [
          `http://127.0.0.1:${refused.port}/secret`,
          `http://localhost:${refused.port}/secret`,
        ])
          expect(await fetchOutcome(partialPage, url), `${variant}: ${url}`).to.equal("error: TypeError");
        expect(await webSocketOutcome(partialPage, `ws://127.0.0.1:${refused.port}/`), variant).to.equal(
          "error",
        );
      } finally {
        await partial.close();
      }
    }
  });

  it("(a) opening a refused address shows the proxy's answer, not the server's", async () => {
    for (const url of ["http://169.254.169.254/", `http://127.0.0.1:${refused.port}/secret`]) {
      const response = await page.goto(url);
      expect(response?.status(), url).to.equal(502);
      expect(await page.textContent("body"), url).to.equal("could not connect to the host");
    }
  });

  it("(b) a redirect from the allowed host to 127.0.0.1 or 169.254.169.254 is refused", async () => {
    const to = (url: string) => `${allowed.url}/redirect?to=${encodeURIComponent(url)}`;
    const response = await page.goto(to(`http://127.0.0.1:${refused.port}/secret`));
    expect(response?.status()).to.equal(502);
    expect(await page.textContent("body")).to.equal("could not connect to the host");
    await page.goto(allowed.url);
    for (const url of [`http://127.0.0.1:${refused.port}/secret`, "http://169.254.169.254/"]) {
      expect(await fetchOutcome(page, to(url)), url).to.equal("error: TypeError");
      expect(await xhrOutcome(page, to(url)), url).to.equal("error");
    }
    expect(allowed.requests.filter((r) => r.startsWith("GET /redirect"))).to.have.length(5);
  });

  it("(c) images, scripts, stylesheets and frames from 127.0.0.1 are refused", async () => {
    const from = `http://127.0.0.1:${refused.port}`;
    allowed.pages.set(
      "subresources",
      `<link rel="stylesheet" href="${from}/leak.css">
       <img id="theirs" src="${from}/pixel.png"><img id="own" src="/pixel.png">
       <script src="${from}/leak.js"></script>
       <iframe src="${from}/secret"></iframe>`,
    );
    await page.goto(`${allowed.url}/page/subresources`);
    expect(await inPage<number>(page, `document.getElementById("own").naturalWidth`)).to.equal(1);
    expect(await inPage<number>(page, `document.getElementById("theirs").naturalWidth`)).to.equal(0);
    expect(await inPage<unknown>(page, "window.leaked")).to.equal(undefined);
    expect(await inPage<string>(page, "getComputedStyle(document.body).backgroundColor")).not.to.equal(
      "rgb(255, 0, 0)",
    );
    const frame = page.frames()[1];
    expect(await frame?.textContent("body")).to.equal("could not connect to the host");
  });

  it("(d) a WebSocket to 127.0.0.1 is refused while one to 127.0.0.2 works", async () => {
    await page.goto(allowed.url);
    for (const url of [
      `ws://127.0.0.1:${refused.port}/`,
      `ws://localhost:${refused.port}/`,
      `wss://127.0.0.1:${refused.port}/`,
    ])
      expect(await webSocketOutcome(page, url), url).to.equal("error");
    expect(await webSocketOutcome(page, `ws://127.0.0.2:${allowed.port}/`)).to.equal(
      "message: hello from 127.0.0.2",
    );
  });

  describe("(e) WebRTC and WebTransport", () => {
    let servers: Awaited<ReturnType<typeof udpListener>>[];
    before(async () => {
      servers = await Promise.all([udpListener("127.0.0.1"), udpListener("127.0.0.2")]);
    });
    after(() => {
      for (const { socket } of servers) socket.close();
    });

    it("sends no UDP packet to a STUN or TURN server, not even an allowed one, and offers no local address", async () => {
      await page.goto(allowed.url);
      const candidates = await iceCandidates(
        page,
        servers.map(({ port }, i) => ({ host: i === 0 ? "127.0.0.1" : "127.0.0.2", port })),
        { host: "127.0.0.1", port: refused.port },
      );
      // Only relayed candidates could be gathered (through the proxy); none of a local address.
      expect(candidates.filter((c) => !/ typ relay /.test(c))).to.deep.equal([]);
      expect(servers.flatMap(({ packets }) => packets)).to.deep.equal([]);
    });

    it("sends no UDP packet with WebTransport (HTTP/3)", async () => {
      await page.goto(allowed.url);
      for (const [i, { port }] of servers.entries()) {
        const host = i === 0 ? "127.0.0.1" : "127.0.0.2";
        const outcome = await inPage<string>(
          page,
          `(async () => { try { const t = new WebTransport("https://${host}:${port}/"); await t.ready; return "ready"; }
            catch (e) { return "error: " + e.name; } })()`,
        );
        expect(outcome, host).to.equal("error: WebTransportError");
      }
      expect(servers.flatMap(({ packets }) => packets)).to.deep.equal([]);
    });

    it("would see a leak: chromium without the WebRTC switch does send STUN packets to the listener", async () => {
      const options = browserLaunchOptions(proxy, chromiumPath);
      const leaky = await chromium.launch({
        ...options,
        args: options.args?.filter((arg) => !arg.startsWith("--webrtc-ip-handling-policy")),
      });
      try {
        const leakyPage = await (await leaky.newContext(browserContextOptions())).newPage();
        await leakyPage.goto(allowed.url);
        const listener = servers[0] as (typeof servers)[0];
        const packet = once(listener.socket, "message");
        void iceCandidates(leakyPage, [{ host: "127.0.0.1", port: listener.port }], {
          host: "127.0.0.1",
          port: refused.port,
        }).catch(() => {});
        await packet;
        expect(listener.packets.length).to.be.greaterThan(0);
      } finally {
        await leaky.close();
        for (const server of servers) server.packets.length = 0;
      }
    });
  });

  describe("(f) file: and chrome: are refused", () => {
    it("refuses them as goto targets, and resolves paths under the base URL", () => {
      const base = "http://127.0.0.2:8080/app/";
      for (const target of [
        "file:///etc/passwd",
        "chrome://version",
        "view-source:http://127.0.0.2/",
        "javascript:alert(1)",
        "data:text/html,<p>x</p>",
        "about:blank",
        "blob:http://127.0.0.2/x",
        "ftp://127.0.0.2/",
      ])
        expect(() => navigationUrl(target, base), target).to.throw(
          NotAWebUrl,
          "only http: and https: URLs can be opened",
        );
      expect(navigationUrl("/login", base).href).to.equal("http://127.0.0.2:8080/login");
      expect(navigationUrl("next", base).href).to.equal("http://127.0.0.2:8080/app/next");
      expect(navigationUrl("https://example.test/a", base).href).to.equal("https://example.test/a");
    });

    it("keeps a page from opening them by link, location, window, frame or redirect", async () => {
      allowed.pages.set(
        "local-links",
        `<a id="file" href="file:///etc/passwd">passwd</a> <a id="chrome" href="chrome://version">version</a>
         <iframe src="file:///etc/passwd"></iframe><iframe src="chrome://version"></iframe>`,
      );
      const url = `${allowed.url}/page/local-links`;
      await page.goto(url);
      for (const link of ["#file", "#chrome"]) {
        const refusal = page.waitForEvent("console", (m) =>
          m.text().startsWith("Not allowed to load local resource"),
        );
        await page.click(link);
        await refusal;
      }
      for (const target of ["file:///etc/passwd", "chrome://version"]) {
        const refusal = page.waitForEvent("console", (m) =>
          m.text().startsWith("Not allowed to load local resource"),
        );
        await inPage(page, `(location.href = ${JSON.stringify(target)}, null)`);
        await refusal;
        const opened = await inPage<boolean>(page, `window.open(${JSON.stringify(target)}) !== null`);
        expect(opened, `window.open ${target}`).to.equal(false);
      }
      // No page or frame left the allowed page; each frame still holds its empty first document,
      // which a file: or chrome: document (another origin) would have replaced.
      expect(context.pages().map((open) => open.url())).to.deep.equal([url]);
      for (const frame of page.frames())
        expect(frame.url(), "a frame's address").not.to.match(/^(file|chrome):/);
      expect(
        await inPage<string[]>(
          page,
          `[...document.querySelectorAll("iframe")].map((f) => f.contentDocument?.body?.innerText ?? "another origin")`,
        ),
      ).to.deep.equal(["", ""]);
      expect(await page.content()).not.to.match(/root:x:0:0|About Version/);
      const redirected = await page
        .goto(`${allowed.url}/redirect?to=${encodeURIComponent("file:///etc/passwd")}`)
        .then(
          () => "loaded",
          (error: Error) => error.message,
        );
      expect(redirected).to.include("net::ERR_UNSAFE_REDIRECT");
      // Chromium shows its error page instead, once it has loaded.
      await page.waitForURL((shown) => shown.protocol === "chrome-error:");
      await page.waitForLoadState("load");
      expect(await page.content()).not.to.include("root:x:0:0");
    });
  });

  it("(g) refuses downloads: nothing is written", async () => {
    allowed.pages.set("download", `<a id="get" href="/download">get the report</a>`);
    await page.goto(`${allowed.url}/page/download`);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#get")]);
    expect(await download.failure(), "the download's failure").not.to.equal(null);
    expect(readdirSync(downloads)).to.deep.equal([]);

    // The same link with downloads accepted does write the file there: the check above can fail.
    const accepting = await browser.newContext({ ...browserContextOptions(), acceptDownloads: true });
    try {
      const acceptingPage = await accepting.newPage();
      await acceptingPage.goto(`${allowed.url}/page/download`);
      const [accepted] = await Promise.all([
        acceptingPage.waitForEvent("download"),
        acceptingPage.click("#get"),
      ]);
      expect(await accepted.failure()).to.equal(null);
      expect(readdirSync(downloads)).to.have.length(1);
    } finally {
      await accepting.close();
    }
  });

  it("keeps a page that uses up its own proxy's connections from hurting a context with another proxy", async () => {
    const [own, other] = await Promise.all([
      startEgressProxy(guard(), { maxTargetConnections: 3 }),
      startEgressProxy(guard(), { maxTargetConnections: 3 }),
    ]);
    try {
      const greedy = await browser.newContext(browserContextOptions(own));
      const neighbour = await browser.newContext(browserContextOptions(other));
      const greedyPage = await greedy.newPage();
      await greedyPage.goto(allowed.url);
      // WebSockets held open: the page's proxy has room for three connections at once.
      const sockets = await inPage<string[]>(
        greedyPage,
        `Promise.all(Array.from({ length: 5 }, () => new Promise((done) => {
          const ws = new WebSocket(${JSON.stringify(`ws://127.0.0.2:${allowed.port}/`)});
          window.held = [...(window.held ?? []), ws];
          ws.onmessage = () => done("open"); ws.onerror = () => done("error"); })))`,
      );
      expect(sockets.filter((s) => s === "open")).to.have.length(3);
      expect(own.targetConnections).to.equal(3);
      const neighbourPage = await neighbour.newPage();
      await neighbourPage.goto(allowed.url);
      expect(await webSocketOutcome(neighbourPage, `ws://127.0.0.2:${allowed.port}/`)).to.equal(
        "message: hello from 127.0.0.2",
      );
      expect(own.targetConnections, "the greedy page's proxy is still full").to.equal(3);
      await Promise.all([greedy.close(), neighbour.close()]);
    } finally {
      await Promise.all([own.close(), other.close()]);
    }
  });

  describe("(h) the proxy's credentials", () => {
    /** A plain request through the proxy, with these Proxy-Authorization credentials (or none). */
    const viaProxy = (url: string, credentials?: string) =>
      new Promise<{ status: number; body: string; authenticate?: string }>((done, fail) => {
        const { port } = new URL(proxy.server);
        const headers = credentials
          ? { "proxy-authorization": `Basic ${Buffer.from(credentials).toString("base64")}` }
          : {};
        request({ host: "127.0.0.1", port, path: url, headers }, async (res) => {
          let body = "";
          for await (const chunk of res) body += chunk;
          done({ status: res.statusCode ?? 0, body, authenticate: res.headers["proxy-authenticate"] });
        })
          .on("error", fail)
          .end();
      });

    /** A CONNECT through the proxy: the status of its answer. */
    const connectVia = (authority: string, credentials?: string) =>
      new Promise<number>((done, fail) => {
        const { port } = new URL(proxy.server);
        const headers = credentials
          ? { "proxy-authorization": `Basic ${Buffer.from(credentials).toString("base64")}` }
          : {};
        request({ host: "127.0.0.1", port, method: "CONNECT", path: authority, headers })
          .on("connect", (res, socket: Socket) => {
            socket.destroy();
            done(res.statusCode ?? 0);
          })
          .on("error", fail)
          .end();
      });

    it("refuses requests and tunnels without them, or with wrong ones, and connects nothing", async () => {
      const seen = allowed.connections;
      for (const credentials of [undefined, `${proxy.username}:wrong`, `someone:${proxy.password}`]) {
        const answer = await viaProxy(`${allowed.url}/secret`, credentials);
        expect(answer.status, String(credentials)).to.equal(407);
        expect(answer.authenticate).to.equal('Basic realm="testrun egress"');
        expect(answer.body).not.to.include("secret");
        expect(await connectVia(`127.0.0.2:${allowed.port}`, credentials), String(credentials)).to.equal(407);
      }
      expect(allowed.connections).to.equal(seen);
      // With them, the same request goes through.
      const answer = await viaProxy(`${allowed.url}/secret`, `${proxy.username}:${proxy.password}`);
      expect(answer).to.include({ status: 200, body: "secret of 127.0.0.2" });
    });

    it("never sends them on to the target", async () => {
      await page.goto(allowed.url);
      const headers = JSON.parse(
        (await fetchOutcome(page, `${allowed.url}/headers`)).replace(/^status 200: /, ""),
      );
      expect(headers).to.have.property("host", `127.0.0.2:${allowed.port}`);
      expect(headers).not.to.have.property("proxy-authorization");
      expect(JSON.stringify(allowed.lastHeaders)).not.to.include(proxy.password);
    });

    it("are new for each proxy", async () => {
      const other = await startEgressProxy(guard());
      try {
        expect(other.password).not.to.equal(proxy.password);
        expect(other.password.length).to.be.at.least(32);
      } finally {
        await other.close();
      }
    });
  });
});

describe("browser egress: the proxy's bounds", () => {
  let allowed: WebTarget;
  const proxies: EgressProxy[] = [];
  const start = async (options: EgressProxyOptions, egress = guard()) => {
    const started = await startEgressProxy(egress, options);
    proxies.push(started);
    return started;
  };
  const credentialsOf = (proxy: EgressProxy) =>
    `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString("base64")}`;

  /** Sends `head` to the proxy on a new connection and reads its status line. */
  async function exchange(proxy: EgressProxy, head: string): Promise<{ status: number; socket: Socket }> {
    const socket = connect(Number(new URL(proxy.server).port), "127.0.0.1");
    socket.on("error", () => {});
    await once(socket, "connect");
    socket.write(head);
    const [chunk] = (await once(socket, "data")) as [Buffer];
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString("latin1"))?.[1]), socket };
  }
  const connectHead = (proxy: EgressProxy, authority: string) =>
    `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\nProxy-Authorization: ${credentialsOf(proxy)}\r\n\r\n`;

  before(async () => {
    allowed = await startWebTarget("127.0.0.2");
  });
  after(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    await allowed.close();
  });

  it("refuses a tunnel or a request past maxTargetConnections with 503, and takes one again once a tunnel closes", async () => {
    const proxy = await start({ maxTargetConnections: 2 });
    const authority = `127.0.0.2:${allowed.port}`;
    const first = await exchange(proxy, connectHead(proxy, authority));
    const second = await exchange(proxy, connectHead(proxy, authority));
    expect([first.status, second.status]).to.deep.equal([200, 200]);
    const seen = allowed.connections;
    const third = await exchange(proxy, connectHead(proxy, authority));
    expect(third.status).to.equal(503);
    const plain = await exchange(
      proxy,
      `GET ${allowed.url}/secret HTTP/1.1\r\nHost: ${authority}\r\nProxy-Authorization: ${credentialsOf(proxy)}\r\n\r\n`,
    );
    expect(plain.status).to.equal(503);
    expect(allowed.connections).to.equal(seen);
    expect(proxy.targetConnections).to.equal(2);

    first.socket.destroy();
    await once(first.socket, "close");
    // The proxy learns of the close as it happens; the next tunnel is taken once it has.
    while (proxy.targetConnections > 1) await new Promise((r) => setImmediate(r));
    const fourth = await exchange(proxy, connectHead(proxy, authority));
    expect(fourth.status).to.equal(200);
    for (const { socket } of [second, third, plain, fourth]) socket.destroy();
  });

  it("closes connections to itself past maxClientConnections as they arrive", async () => {
    const proxy = await start({ maxClientConnections: 2 });
    const authority = `127.0.0.2:${allowed.port}`;
    const held = [
      await exchange(proxy, connectHead(proxy, authority)),
      await exchange(proxy, connectHead(proxy, authority)),
    ];
    expect(held.map(({ status }) => status)).to.deep.equal([200, 200]);
    const third = connect(Number(new URL(proxy.server).port), "127.0.0.1");
    const received: Buffer[] = [];
    third.on("data", (chunk: Buffer) => received.push(chunk)).on("error", () => {});
    third.write(connectHead(proxy, authority));
    await once(third, "close");
    expect(Buffer.concat(received).toString()).to.equal("");
    for (const { socket } of held) socket.destroy();
  });

  it("answers 431 to a request whose headers pass maxHeaderBytes (32 KiB by default), sending nothing on", async () => {
    const proxy = await start({});
    const seen = allowed.requests.length;
    const big = "x".repeat(33 * 1024);
    const tooBig = await exchange(
      proxy,
      `GET ${allowed.url}/secret HTTP/1.1\r\nHost: 127.0.0.2\r\nProxy-Authorization: ${credentialsOf(proxy)}\r\nX-Big: ${big}\r\n\r\n`,
    );
    expect(tooBig.status).to.equal(431);
    const tunnel = await exchange(
      proxy,
      `CONNECT 127.0.0.2:${allowed.port} HTTP/1.1\r\nProxy-Authorization: ${credentialsOf(proxy)}\r\nX-Big: ${big}\r\n\r\n`,
    );
    expect(tunnel.status).to.equal(431);
    expect(allowed.requests.length).to.equal(seen);
    const small = await exchange(
      proxy,
      `GET ${allowed.url}/secret HTTP/1.1\r\nHost: 127.0.0.2\r\nProxy-Authorization: ${credentialsOf(proxy)}\r\nX-Big: ${"x".repeat(30 * 1024)}\r\n\r\n`,
    );
    expect(small.status).to.equal(200);
    for (const { socket } of [tooBig, tunnel, small]) socket.destroy();
  });

  it("answers 502 when a target cannot be resolved and connected within connectTimeoutMs", async () => {
    const hanging: Resolve = () => new Promise(() => {});
    const proxy = await start(
      { connectTimeoutMs: 100 },
      new EgressGuard(new EgressPolicy({ allow: parseAllowList("127.0.0.2/32") }), { resolve: hanging }),
    );
    const tunnel = await exchange(proxy, connectHead(proxy, "never.test:80"));
    expect(tunnel.status).to.equal(502);
    tunnel.socket.destroy();
  });

  it("closes a tunnel idle for idleTimeoutMs, at both ends", async () => {
    const proxy = await start({ idleTimeoutMs: 200 });
    const openBefore = allowed.open;
    const tunnel = await exchange(proxy, connectHead(proxy, `127.0.0.2:${allowed.port}`));
    expect(tunnel.status).to.equal(200);
    await once(tunnel.socket, "close");
    // The target's end closes with it (the loop ends, or the test times out).
    while (allowed.open > openBefore || proxy.targetConnections > 0)
      await new Promise((r) => setImmediate(r));
  });

  it("closes a request whose target stays silent for idleTimeoutMs, and its connection to the target", async () => {
    const proxy = await start({ idleTimeoutMs: 200 });
    const openBefore = allowed.open;
    const socket = connect(Number(new URL(proxy.server).port), "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.write(
      `GET ${allowed.url}/hang HTTP/1.1\r\nHost: 127.0.0.2\r\nProxy-Authorization: ${credentialsOf(proxy)}\r\n\r\n`,
    );
    await once(socket, "close");
    expect(Buffer.concat(received).toString()).to.equal("");
    expect(allowed.requests).to.include("GET /hang");
    while (allowed.open > openBefore || proxy.targetConnections > 0)
      await new Promise((r) => setImmediate(r));
  });

  it("serves only absolute http: requests and CONNECT", async () => {
    const proxy = await start({});
    const auth = `Proxy-Authorization: ${credentialsOf(proxy)}\r\n`;
    const answers = await Promise.all(
      [
        `GET /secret HTTP/1.1\r\nHost: 127.0.0.2:${allowed.port}\r\n${auth}\r\n`,
        `GET https://127.0.0.2:${allowed.port}/ HTTP/1.1\r\nHost: 127.0.0.2\r\n${auth}\r\n`,
        `CONNECT 127.0.0.2 HTTP/1.1\r\n${auth}\r\n`,
        `CONNECT 127.0.0.2:99999 HTTP/1.1\r\n${auth}\r\n`,
        `CONNECT user@127.0.0.2:80 HTTP/1.1\r\n${auth}\r\n`,
        `GET ${allowed.url}/ HTTP/1.1\r\nHost: 127.0.0.2\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${auth}\r\n`,
      ].map((head) => exchange(proxy, head)),
    );
    expect(answers.map(({ status }) => status)).to.deep.equal([400, 400, 400, 400, 400, 501]);
    for (const { socket } of answers) socket.destroy();
  });

  it("close() ends open tunnels and stops listening", async () => {
    const proxy = await startEgressProxy(guard());
    const tunnel = await exchange(proxy, connectHead(proxy, `127.0.0.2:${allowed.port}`));
    expect(tunnel.status).to.equal(200);
    const closed = once(tunnel.socket, "close");
    await proxy.close();
    await closed;
    const again = connect(Number(new URL(proxy.server).port), "127.0.0.1");
    const [error] = (await once(again, "error")) as [NodeJS.ErrnoException];
    expect(error.code).to.equal("ECONNREFUSED");
  });
});
