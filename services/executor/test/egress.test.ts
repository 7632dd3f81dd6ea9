// The egress guard (docs/runs.md, "Egress"): which addresses are refused, and that a connection
// made through the guard goes only to an address it checked, for every form a URL can name it in,
// DNS answers that change between lookups and redirects included. Real sockets throughout.
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { stepsFromFile } from "@testrun/content-file";
import {
  defaultBlockedRanges,
  EgressGuard,
  EgressPolicy,
  parseAllowList,
  parseCidrList,
  type Resolve,
} from "@testrun/kit/egress";
import { blockedSamples, ipv4Spellings, ipv6FormsOf, repoRoot, urlHost } from "@testrun/testing";
import { expect } from "chai";
import { configSchema } from "../src/config.js";
import { describeFetchError } from "../src/steps/http.js";
import { checkReachable } from "../src/steps/reachability.js";
import { runSteps } from "../src/steps/runner.js";
import { localEgress } from "./target.js";

/** The guard as an executor has it by default: no EGRESS_ALLOW_CIDRS, no EGRESS_DENY_CIDRS. */
const policy = (allow = "", deny = "") =>
  new EgressPolicy({ allow: parseAllowList(allow), deny: parseCidrList(deny) });

describe("egress policy", () => {
  describe("the default blocks", () => {
    it("has addresses to test in every range it blocks (@testrun/testing, blockedSamples)", () => {
      expect(Object.keys(blockedSamples)).to.have.members(defaultBlockedRanges.map(({ cidr }) => cidr));
    });

    for (const { cidr, what } of defaultBlockedRanges) {
      const ipv4 = !cidr.includes(":");
      it(`refuses ${cidr}, ${what}${ipv4 ? ", in its IPv6 forms too" : ""}`, () => {
        for (const address of blockedSamples[cidr] ?? []) {
          expect(policy().allows(address), address).to.equal(false);
          if (ipv4)
            for (const form of ipv6FormsOf(address)) expect(policy().allows(form), form).to.equal(false);
        }
      });
    }

    const blocked = {
      "IPv6 unspecified and loopback, written out": ["0:0:0:0:0:0:0:0", "0:0:0:0:0:0:0:1"],
      // "::8.8.8.8" is how DNS answers print ::808:808 (ipaddr.js alone reads it as ::ffff:8.8.8.8).
      "IPv4-compatible ::/96, as DNS prints it": ["::8.8.8.8"],
      "IPv6 link-local with a zone": ["fe80::1%eth0"],
      "IPv4-mapped forms of blocked addresses": [
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "0:0:0:0:0:ffff:7f00:0001",
        "::ffff:169.254.169.254",
        "::ffff:0.0.0.0",
        "::ffff:224.0.0.1",
        "::ffff:100.64.0.1",
      ],
      "IPv4-translated (::ffff:0:0:0/96) forms": ["::ffff:0:127.0.0.1", "::ffff:0:a9fe:a9fe"],
      "NAT64 (64:ff9b::/96) forms": ["64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::100.100.100.200"],
      "6to4 (2002::/16) forms, the IPv4 address in groups 1-2": [
        "2002:a9fe:a9fe::1",
        "2002:7f00:1::",
        "2002:6464:64c8:1:2:3:4:5",
      ],
    };
    for (const [what, addresses] of Object.entries(blocked)) {
      it(`refuses ${what}`, () => {
        for (const address of addresses) expect(policy().allows(address), address).to.equal(false);
      });
    }

    it("allows private ranges, public addresses and the neighbours of every block", () => {
      const allowed = [
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "fc00::1",
        "fd12:3456::1",
        "8.8.8.8",
        "2001:4860:4860::8888",
        "100.63.255.255",
        "100.128.0.0",
        "191.255.255.255",
        "192.0.1.255",
        "192.0.3.0",
        "192.88.98.255",
        "192.88.100.0",
        "198.17.255.255",
        "198.20.0.0",
        "198.51.99.255",
        "198.51.101.0",
        "203.0.112.255",
        "203.0.114.0",
        "1.0.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "169.253.255.255",
        "169.255.0.0",
        "168.63.129.17",
        "223.255.255.255",
        "fd00:ec2::253",
        "::1:0:0:1",
        "100:0:0:2::1",
        "2001:200::1",
        "2001:db7:ffff:ffff::1",
        "2001:db9::1",
        "3ffe:ffff::1",
        "3fff:1000::1",
        "5eff:ffff::1",
        "5f01::1",
        "::ffff:8.8.8.8",
        "::ffff:10.0.0.1",
        "64:ff9b::8.8.8.8",
        "2002:808:808::1",
        "2002:a00:1::",
        "64:ff9b:2::1",
      ];
      for (const address of allowed) expect(policy().allows(address), address).to.equal(true);
    });

    it("refuses what is not an address in canonical form rather than guessing", () => {
      for (const text of [
        "",
        "localhost",
        "127.1",
        "0x7f.0.0.1",
        "2130706433",
        "0177.0.0.1",
        "[::1]",
        "1.2.3.4.5",
      ])
        expect(policy().allows(text), text).to.equal(false);
    });

    it("lists every range it blocks, each parsable, and so do the docs' tables", () => {
      expect(defaultBlockedRanges.map((r) => r.cidr)).to.include.members([
        "127.0.0.0/8",
        "169.254.0.0/16",
        "fd00:ec2::254/128",
        "fe80::/10",
      ]);
      for (const { cidr } of defaultBlockedRanges) expect(parseCidrList(cidr), cidr).to.have.length(1);
      // The section each table is in, up to the next heading or list item of its level.
      const section = (file: string, heading: string, end: RegExp) => {
        const text = readFileSync(`${repoRoot}${file}`, "utf8");
        const from = text.indexOf(heading);
        const rest = text.slice(from + heading.length);
        return rest.slice(0, rest.search(end));
      };
      const tables = {
        "docs/security.md": section("docs/security.md", "## Executor egress (SSRF)", /\n## /),
        "docs/runs.md": section("docs/runs.md", "- **Refused by default**", /\n- \*\*/),
      };
      for (const [file, table] of Object.entries(tables))
        for (const { cidr } of defaultBlockedRanges)
          expect(table, `${file} lists ${cidr}`).to.include(`\`${cidr}\``);
    });
  });

  describe("EGRESS_ALLOW_CIDRS and EGRESS_DENY_CIDRS", () => {
    it("makes exceptions to the default blocks with EGRESS_ALLOW_CIDRS, exactly as wide as written", () => {
      const loopback = policy("127.0.0.0/8");
      expect(loopback.allows("127.0.0.1")).to.equal(true);
      expect(loopback.allows("::ffff:127.0.0.1")).to.equal(true);
      expect(loopback.allows("::1")).to.equal(false);
      expect(loopback.allows("169.254.169.254")).to.equal(false);
      const oneHost = policy("169.254.10.10");
      expect(oneHost.allows("169.254.10.10")).to.equal(true);
      expect(oneHost.allows("169.254.10.11")).to.equal(false);
      expect(policy("::1/128").allows("::1")).to.equal(true);
    });

    it("lifts a block only with an exception as narrow as it: a VPN's 100.64.0.0/10 leaves the metadata address in it refused", () => {
      const vpn = policy("100.64.0.0/10");
      expect(vpn.allows("100.64.0.1")).to.equal(true);
      expect(vpn.allows("100.100.100.199")).to.equal(true);
      expect(vpn.allows("100.100.100.200")).to.equal(false);
      expect(policy("100.64.0.0/10, 100.100.100.200").allows("100.100.100.200")).to.equal(true);
      expect(policy("192.0.2.0/24").allows("192.0.2.7")).to.equal(true);
    });

    it("refuses EGRESS_DENY_CIDRS on top of the defaults, in every form, whatever EGRESS_ALLOW_CIDRS says", () => {
      const deny = policy("", "10.0.0.0/8, fd00:abcd::/32");
      for (const address of ["10.1.2.3", "::ffff:10.1.2.3", "64:ff9b::10.1.2.3", "fd00:abcd::1"])
        expect(deny.allows(address), address).to.equal(false);
      expect(deny.allows("11.0.0.1")).to.equal(true);
      expect(policy("10.0.0.0/8", "10.0.0.0/8").allows("10.0.0.1")).to.equal(false);
      expect(policy("127.0.0.0/8", "127.0.0.5/32").allows("127.0.0.5")).to.equal(false);
      const linkLocal = policy("169.254.0.0/16", "169.254.169.254/32");
      expect(linkLocal.allows("169.254.1.1")).to.equal(true);
      expect(linkLocal.allows("169.254.169.254")).to.equal(false);
      const sixToFour = policy("", "10.0.0.0/8");
      expect(sixToFour.allows("2002:a00:1::")).to.equal(false);
    });

    it("reads lists with blanks and empty entries, single addresses, and IPv4 ranges written as IPv6", () => {
      expect(parseCidrList("")).to.deep.equal([]);
      expect(parseCidrList(" 10.0.0.0/8 , fd00::/8 ,, 192.168.1.5 ")).to.have.length(3);
      expect(policy("", "::ffff:10.0.0.0/104").allows("10.9.9.9")).to.equal(false);
    });

    it("rejects an entry that is not a range, naming it", () => {
      for (const entry of ["10.0.0.0/33", "10.1/8", "0x7f.1/32", "example.com", "10.0.0.0/8;", "::/129"])
        for (const parse of [parseCidrList, parseAllowList])
          expect(() => parse(`192.168.0.0/16,${entry}`), entry).to.throw(
            `"${entry}" is not an address range`,
          );
    });

    it("refuses in EGRESS_ALLOW_CIDRS an IPv6 form of IPv4 addresses: 64:ff9b::/96 would allow every IPv4 address", () => {
      for (const entry of [
        "64:ff9b::/96",
        "::ffff:0:0/96",
        "::ffff:0:0:0/96",
        "::ffff:127.0.0.0/104",
        "::ffff:169.254.169.254",
        "64:ff9b::/64",
        "64:ff9b:1::/48",
        "2002::/16",
        "2002:a9fe:a9fe::/48",
        "2001::/32",
        "::/16",
      ])
        expect(() => parseAllowList(`127.0.0.0/8, ${entry}, 10.9.9.9`), entry).to.throw(
          `"${entry}" holds IPv6 forms of IPv4 addresses: write the IPv4 range itself`,
        );
      // Without the refusal, 64:ff9b::/96 read as an IPv4 range of /0 allowed all of these.
      expect(() => policy("64:ff9b::/96")).to.throw();
      expect(policy("127.0.0.0/8, ::1/128, fe80::/16").allows("::1")).to.equal(true);
    });

    it("refuses in EGRESS_ALLOW_CIDRS a range wider than /8 (IPv4) or /16 (IPv6): allowing everything defeats the guard", () => {
      for (const [entry, widest] of [
        ["0.0.0.0/0", 8],
        ["0.0.0.0/1", 8],
        ["96.0.0.0/3", 8],
        ["::/0", 16],
        ["fe80::/10", 16],
        ["8000::/1", 16],
      ] as const) {
        const error = (() => {
          try {
            parseAllowList(`10.0.0.0/8,${entry},192.168.7.7`);
          } catch (thrown) {
            return (thrown as Error).message;
          }
        })();
        expect(error, entry).to.equal(
          `"${entry}" is wider than /${widest}: allowing everything defeats the guard; list the ranges you need`,
        );
      }
      expect(parseAllowList("127.0.0.0/8, 224.0.0.0/8, ff02::/16")).to.have.length(3);
      // EGRESS_DENY_CIDRS takes them all: refusing too much is safe.
      expect(policy("", "0.0.0.0/0, ::/0, 64:ff9b::/96").allows("8.8.8.8")).to.equal(false);
    });
  });
});

/** A server that records every request; it answers 200, or 302 to `redirectTo` on /redirect. */
async function recordingServer(host: string, redirectTo?: () => string) {
  const received: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    received.push(req);
    if (req.url === "/redirect" && redirectTo) res.writeHead(302, { location: redirectTo() }).end();
    else res.writeHead(200).end("reached");
  });
  server.listen(0, host);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    port,
    received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("egress guard, with real connections", () => {
  let loopback: Awaited<ReturnType<typeof recordingServer>>;
  const strict = new EgressGuard(policy());
  before(async () => {
    // On every loopback address, IPv4 and IPv6: whatever form a URL names it in reaches it, unless refused.
    loopback = await recordingServer("::");
  });
  after(async () => {
    loopback.close();
    await strict.close();
  });
  beforeEach(() => {
    loopback.received.length = 0;
  });

  const loopbackUrls = () => {
    const p = loopback.port;
    return [
      `http://127.0.0.1:${p}/`,
      `http://localhost:${p}/`,
      `http://[::1]:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[::ffff:7f00:1]:${p}/`,
      `http://2130706433:${p}/`,
      `http://0x7f.1:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://127.1:${p}/`,
      `http://0.0.0.0:${p}/`,
      `http://127.0.0.2:${p}/`,
    ];
  };
  const step = (path: string) => stepsFromFile([{ name: "s", http: { method: "GET", path } }], "steps");

  it("reaches the loopback server under every one of these names when loopback is allowed (the control)", async () => {
    const open = new EgressGuard(policy("0.0.0.0/8, 127.0.0.0/8, ::1/128"));
    try {
      for (const url of loopbackUrls()) {
        const outcome = await runSteps(step("/"), { baseUrl: url.slice(0, -1), variables: {}, egress: open });
        expect(outcome.passed, `${url}: ${outcome.summary}`).to.equal(true);
      }
    } finally {
      await open.close();
    }
    expect(loopback.received).to.have.length(loopbackUrls().length);
  });

  it("fails a step against each of them by default with the one message, and sends nothing", async () => {
    for (const url of loopbackUrls()) {
      const outcome = await runSteps(step("/"), { baseUrl: url.slice(0, -1), variables: {}, egress: strict });
      expect(outcome.summary, url).to.equal('step 1 "s": request failed: could not connect to the host');
    }
    expect(loopback.received).to.have.length(0);
  });

  it("gives an unknown host and a refused connection the same message as a refused address", async () => {
    const closed = await recordingServer("127.0.0.2");
    closed.close();
    for (const base of ["http://no-such-host.invalid", `http://127.0.0.2:${closed.port}`]) {
      const outcome = await runSteps(step("/"), { baseUrl: base, variables: {}, egress: localEgress });
      expect(outcome.summary, base).to.equal('step 1 "s": request failed: could not connect to the host');
    }
  });

  it("connects to the address it checked: a DNS answer that changes afterwards is never used", async () => {
    // The first answer is allowed (127.0.0.2 only), every later one is loopback's 127.0.0.1.
    const lookups: string[] = [];
    const rebinding: Resolve = async (hostname) => {
      lookups.push(hostname);
      return [{ address: lookups.length === 1 ? "127.0.0.2" : "127.0.0.1", family: 4 }];
    };
    const first = new EgressGuard(policy("127.0.0.2/32"), { resolve: rebinding });
    const url = `http://rebinding.test:${loopback.port}/`;
    try {
      expect((await first.fetch(url)).status).to.equal(200);
    } finally {
      await first.close();
    }
    expect(lookups).to.deep.equal(["rebinding.test"]);
    expect(loopback.received.map((req) => req.socket.localAddress)).to.deep.equal(["::ffff:127.0.0.2"]);
    expect(loopback.received[0]?.headers.host).to.equal(`rebinding.test:${loopback.port}`);
    // A new connection looks the name up again, and is refused on what it gets now.
    const second = new EgressGuard(policy("127.0.0.2/32"), { resolve: rebinding });
    try {
      const refused = await second.fetch(url).catch((error: Error) => error);
      expect((refused as Error).cause).to.have.property("code", "EGRESS_REFUSED");
    } finally {
      await second.close();
    }
    expect(loopback.received).to.have.length(1);
  });

  it("refuses a host one of whose addresses is refused, though another is allowed", async () => {
    const mixed: Resolve = async () => [
      { address: "127.0.0.2", family: 4 },
      { address: "127.0.0.1", family: 4 },
    ];
    const guard = new EgressGuard(policy("127.0.0.2/32"), { resolve: mixed });
    try {
      const refused = await guard.fetch(`http://mixed.test:${loopback.port}/`).catch((error: Error) => error);
      expect((refused as Error).cause).to.have.property("code", "EGRESS_REFUSED");
      expect(loopback.received).to.have.length(0);
    } finally {
      await guard.close();
    }
  });

  it("refuses a redirect from an allowed target to a refused address, on every hop", async () => {
    // The allowed target: 127.0.0.2 only, carved out of the loopback block.
    let location = "";
    const allowed = await recordingServer("127.0.0.2", () => location);
    const guard = new EgressGuard(policy("127.0.0.2/32"));
    try {
      for (const to of [
        `http://127.0.0.1:${loopback.port}/secret`,
        `http://localhost:${loopback.port}/secret`,
      ]) {
        location = to;
        const followed = await guard
          .fetch(`http://127.0.0.2:${allowed.port}/redirect`, { redirect: "follow" })
          .catch((error: Error) => error);
        expect((followed as Error).cause, to).to.have.property("code", "EGRESS_REFUSED");
      }
      expect(allowed.received.map((req) => req.url)).to.deep.equal(["/redirect", "/redirect"]);
      expect(loopback.received).to.have.length(0);
      // And a hop to an allowed address is followed: the guard is on the hops, not against redirects.
      location = `http://127.0.0.2:${allowed.port}/landed`;
      const landed = await guard.fetch(`http://127.0.0.2:${allowed.port}/redirect`, { redirect: "follow" });
      expect(await landed.text()).to.equal("reached");
    } finally {
      allowed.close();
      await guard.close();
    }
  });

  describe("cluster names", () => {
    // Every name resolves to 127.0.0.2, which these guards allow: what refuses a name is its form.
    const lookups: string[] = [];
    const toAllowed: Resolve = async (hostname) => {
      lookups.push(hostname);
      return [{ address: "127.0.0.2", family: 4 }];
    };
    const guard = (clusterNames = {}) =>
      new EgressGuard(policy("127.0.0.2/32"), { resolve: toAllowed, clusterNames });
    const clusterNames = [
      "redis",
      "runs",
      "Redis.",
      "svc",
      "api.testrun.svc",
      "api.testrun.svc.cluster.local",
      "API.TESTRUN.SVC.CLUSTER.LOCAL.",
      "10-1-2-3.testrun.pod.cluster.local",
      "cluster.local",
    ];
    const outsideNames = ["localhost", "staging.example.com", "svc.example.com", "cluster.local.example.com"];
    beforeEach(() => {
      lookups.length = 0;
    });

    it("refuses host names cluster DNS answers, before resolving them, with the one message", async () => {
      const strictNames = guard();
      try {
        for (const name of clusterNames) {
          const base = `http://${name}:${loopback.port}`;
          const outcome = await runSteps(step("/"), { baseUrl: base, variables: {}, egress: strictNames });
          expect(outcome.summary, name).to.equal('step 1 "s": request failed: could not connect to the host');
          expect(await checkReachable(base, strictNames), name).to.deep.equal({
            reachable: false,
            reason: "no HTTP answer from the base URL",
            cause: "EGRESS_REFUSED",
          });
          const refused = await strictNames.connect(name, loopback.port).catch((error: Error) => error);
          expect(refused, name).to.have.property("code", "EGRESS_REFUSED");
        }
      } finally {
        await strictNames.close();
      }
      expect(lookups).to.deep.equal([]);
      expect(loopback.received).to.have.length(0);
    });

    it("connects to other names, localhost left to the address rules", async () => {
      const strictNames = guard();
      try {
        for (const name of outsideNames) {
          const response = await strictNames.fetch(`http://${name}:${loopback.port}/`);
          expect(response.status, name).to.equal(200);
        }
      } finally {
        await strictNames.close();
      }
      expect(loopback.received).to.have.length(outsideNames.length);
    });

    it("refuses names under EGRESS_CLUSTER_DOMAIN, whatever EGRESS_ALLOW_CIDRS allows", async () => {
      const corp = guard({ domain: "corp.internal" });
      try {
        for (const name of ["api.testrun.svc.corp.internal", "x.cluster.local", "redis"]) {
          const refused = await corp.fetch(`http://${name}:${loopback.port}/`).catch((error: Error) => error);
          expect((refused as Error).cause, name).to.have.property("code", "EGRESS_REFUSED");
        }
      } finally {
        await corp.close();
      }
      expect(loopback.received).to.have.length(0);
    });

    it("connects to cluster names with EGRESS_ALLOW_CLUSTER_NAMES, their addresses still checked", async () => {
      const open = guard({ allow: true });
      const toLoopback = new EgressGuard(policy("127.0.0.2/32"), {
        resolve: async () => [{ address: "127.0.0.1", family: 4 }],
        clusterNames: { allow: true },
      });
      try {
        for (const name of ["redis", "api.testrun.svc.cluster.local"])
          expect((await open.fetch(`http://${name}:${loopback.port}/`)).status, name).to.equal(200);
        const refused = await toLoopback
          .fetch(`http://redis:${loopback.port}/`)
          .catch((error: Error) => error);
        expect((refused as Error).cause).to.have.property("code", "EGRESS_REFUSED");
      } finally {
        await open.close();
        await toLoopback.close();
      }
      expect(loopback.received).to.have.length(2);
    });

    it("reads EGRESS_CLUSTER_DOMAIN and EGRESS_ALLOW_CLUSTER_NAMES from the environment", () => {
      const env = { EXECUTOR_TOKEN: "t".repeat(32), REDIS_URL: "redis://127.0.0.1:6379" };
      const byDefault = configSchema.parse(env);
      expect([byDefault.EGRESS_CLUSTER_DOMAIN, byDefault.EGRESS_ALLOW_CLUSTER_NAMES]).to.deep.equal([
        "cluster.local",
        false,
      ]);
      const set = configSchema.parse({
        ...env,
        EGRESS_CLUSTER_DOMAIN: "corp.internal",
        EGRESS_ALLOW_CLUSTER_NAMES: "true",
      });
      expect([set.EGRESS_CLUSTER_DOMAIN, set.EGRESS_ALLOW_CLUSTER_NAMES]).to.deep.equal([
        "corp.internal",
        true,
      ]);
      for (const wrong of [{ EGRESS_CLUSTER_DOMAIN: "http://x" }, { EGRESS_ALLOW_CLUSTER_NAMES: "yes" }])
        expect(configSchema.safeParse({ ...env, ...wrong }).success, JSON.stringify(wrong)).to.equal(false);
      const allow = configSchema.safeParse({ ...env, EGRESS_ALLOW_CIDRS: "127.0.0.0/8,64:ff9b::/96" });
      expect(allow.error?.issues.map((issue) => issue.message)).to.deep.equal([
        '"64:ff9b::/96" holds IPv6 forms of IPv4 addresses: write the IPv4 range itself',
      ]);
    });
  });

  it("opens raw TCP connections (a forward proxy's CONNECT) through the same checks", async () => {
    for (const host of ["127.0.0.1", "localhost", "::1"]) {
      const refused = await strict.connect(host, loopback.port).catch((error: Error) => error);
      expect(refused, host).to.have.property("code", "EGRESS_REFUSED");
    }
    const socket = await localEgress.connect("127.0.0.1", loopback.port);
    expect(socket.remotePort).to.equal(loopback.port);
    socket.destroy();
  });
});

describe("egress guard: a step to each default blocked range", () => {
  /** What `blocked.example.test` resolves to. */
  let answer = "";
  const resolve: Resolve = async () => [{ address: answer, family: answer.includes(":") ? 6 : 4 }];
  const guard = new EgressGuard(policy(), { resolve });
  after(() => guard.close());
  const cannotConnect = 'step 1 "s": request failed: could not connect to the host';
  const stepTo = (baseUrl: string) =>
    runSteps(stepsFromFile([{ name: "s", http: { method: "GET", path: "/" } }], "steps"), {
      baseUrl,
      variables: {},
      egress: guard,
    });
  /** Why a fetch through the guard failed: the code of its cause, EGRESS_REFUSED when the guard refused it. */
  const refusal = (url: string) =>
    guard.fetch(url).then(
      () => "connected",
      (error: Error) => String((error.cause as { code?: unknown } | undefined)?.code ?? error.name),
    );

  for (const { cidr } of defaultBlockedRanges) {
    const ipv4 = !cidr.includes(":");
    it(`refuses ${cidr} by address and by a name resolving to it${ipv4 ? ", in IPv6 forms and other spellings" : ""}`, async () => {
      for (const [index, address] of (blockedSamples[cidr] ?? []).entries()) {
        // The first address in every form a URL can name it in; the others as they are.
        const hosts =
          index === 0 && ipv4
            ? [address, ...ipv6FormsOf(address).map(urlHost), ...ipv4Spellings(address)]
            : [urlHost(address)];
        for (const host of hosts) {
          expect((await stepTo(`http://${host}`)).summary, host).to.equal(cannotConnect);
          expect(await refusal(`http://${host}/`), host).to.equal("EGRESS_REFUSED");
        }
        answer = address;
        expect((await stepTo("http://blocked.example.test")).summary, `a name for ${address}`).to.equal(
          cannotConnect,
        );
        expect(await refusal("http://blocked.example.test/"), `a name for ${address}`).to.equal(
          "EGRESS_REFUSED",
        );
      }
    });
  }
});

describe("what a failed connection says", () => {
  /** A system error as net and dns raise it, wrapped as fetch wraps it. */
  const fetchFailed = (message: string, fields: Record<string, unknown>) =>
    new TypeError("fetch failed", { cause: Object.assign(new Error(message), fields) });

  it("says only 'could not connect to the host' for any failure to resolve or connect, never the address", () => {
    const failures = [
      fetchFailed("connect EHOSTDOWN 10.1.2.3:80", {
        code: "EHOSTDOWN",
        syscall: "connect",
        address: "10.1.2.3",
      }),
      fetchFailed("connect EADDRNOTAVAIL 10.1.2.3:80 - Local (0.0.0.0:0)", {
        code: "EADDRNOTAVAIL",
        syscall: "connect",
      }),
      fetchFailed("connect ENETDOWN fd12::7:80", { code: "ENETDOWN", syscall: "connect" }),
      fetchFailed("connect EPERM 10.1.2.3:443", { code: "EPERM", syscall: "connect" }),
      fetchFailed("getaddrinfo EAI_FAIL internal.corp.example", { code: "EAI_FAIL", syscall: "getaddrinfo" }),
      fetchFailed("write EPIPE 10.1.2.3:80", { code: "EPIPE", syscall: "write" }),
      fetchFailed("read EIO fd12::7", { code: "EIO", syscall: "read" }),
      new TypeError("fetch failed", {
        cause: new AggregateError([
          Object.assign(new Error("connect EHOSTDOWN 10.1.2.3:80"), {
            code: "EHOSTDOWN",
            syscall: "connect",
          }),
          Object.assign(new Error("connect ENETUNREACH fd12::7:80"), {
            code: "ENETUNREACH",
            syscall: "connect",
          }),
        ]),
      }),
    ];
    for (const error of failures)
      expect(describeFetchError(error), String((error.cause as Error).message)).to.equal(
        "could not connect to the host",
      );
  });

  it("still tells apart what happened after the connection was made", () => {
    expect(
      describeFetchError(fetchFailed("read ECONNRESET", { code: "ECONNRESET", syscall: "read" })),
    ).to.equal("connection closed by the server");
    expect(
      describeFetchError(
        fetchFailed(
          "Hostname/IP does not match certificate's altnames: IP: 10.1.2.3 is not in the cert's list",
          {
            code: "ERR_TLS_CERT_ALTNAME_INVALID",
          },
        ),
      ),
    ).to.equal("TLS error");
    expect(describeFetchError(fetchFailed("Body timeout error", { code: "UND_ERR_BODY_TIMEOUT" }))).to.equal(
      "Body timeout error",
    );
  });
});

describe("egress guard: lookups in flight (maxLookups)", () => {
  it("fails a lookup past the bound at once as EAI_AGAIN, and takes lookups again once one ends", async () => {
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const resolve: Resolve = async () => {
      await answered;
      return [{ address: "8.8.8.8", family: 4 }];
    };
    const guard = new EgressGuard(policy(), { resolve, maxLookups: 1 });
    const lookup = (host: string) =>
      new Promise<{ code?: string; address?: string }>((done) =>
        guard.lookup(host, {}, (error, address) =>
          done(error ? { code: (error as NodeJS.ErrnoException).code } : { address: String(address) }),
        ),
      );

    const slow = lookup("slow.example.test");
    expect(await lookup("other.example.test")).to.deep.equal({ code: "EAI_AGAIN" });
    answer();
    expect(await slow).to.deep.equal({ address: "8.8.8.8" });
    expect(await lookup("other.example.test")).to.deep.equal({ address: "8.8.8.8" });
  });
});
