// The console's anonymous bounds per client address (services/console/src/http/auth-limit.ts):
// the sign-in routes and the public badges, served by the console's own app (http/app.ts) over
// real HTTP, with and without a trusted proxy in front (TRUST_PROXY_HOPS). Nothing behind them is
// reached: the sign-in requests carry no JSON (400 before any lookup) and the automation service
// is away (a badge is 503), so every answer here is the bounds' or the route's own.

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createConsoleApp } from "../src/http/app.js";
import { AuthAttempts, maxClientBuckets } from "../src/http/auth-limit.js";
import { appWithNothingBehind } from "./edge-app.js";

const perClient = 3;

async function consoleServer(trustProxyHops: number): Promise<{ base: string; server: Server }> {
  const options = await appWithNothingBehind("console-client-limits-test", { perClient, trustProxyHops });
  const server = createConsoleApp(options).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A sign-in link preview without a JSON body: 400 (link_invalid) when let through, else 429. */
const preview = (base: string, forwardedFor?: string) =>
  fetch(`${base}/auth/link/preview`, {
    method: "POST",
    headers: { "Content-Type": "text/plain", ...(forwardedFor && { "X-Forwarded-For": forwardedFor }) },
    body: "x",
  });

const badge = (base: string, forwardedFor?: string) =>
  fetch(`${base}/badges/abcdefghijklmnopqrstuvwxyz012345.svg`, {
    headers: forwardedFor ? { "X-Forwarded-For": forwardedFor } : {},
  });

describe("console anonymous bounds per client address", () => {
  describe("behind one trusted proxy (TRUST_PROXY_HOPS=1)", () => {
    let base: string;
    let server: Server;
    before(async () => ({ base, server } = await consoleServer(1)));
    after(() => server.close());

    it("refuses the client that used up its sign-in bucket with 429 and Retry-After, while another address signs in", async () => {
      for (let i = 0; i < perClient; i++) expect((await preview(base, "198.51.100.1")).status).to.equal(400);
      const refused = await preview(base, "198.51.100.1");
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 60);
      expect(((await refused.json()) as { message: string }).message).to.match(/from your address/);
      expect((await preview(base, "198.51.100.2")).status).to.equal(400);
    });

    it("believes only the address the proxy appended: what the client wrote before it is not its address", async () => {
      for (let i = 0; i < perClient; i++) await preview(base, "198.51.100.3");
      // The client writes a fresh address of its own each time; the proxy appends the real one.
      for (let i = 0; i < 5; i++)
        expect((await preview(base, `203.0.113.${i}, 198.51.100.3`)).status).to.equal(429);
    });

    it("counts an IPv6 client by its /64, however many addresses of it it uses", async () => {
      for (let i = 0; i < perClient; i++)
        expect((await preview(base, `2001:db8:aa:1::${i + 1}`)).status).to.equal(400);
      expect((await preview(base, "2001:db8:aa:1:ffff:1:2:3")).status).to.equal(429);
      expect((await preview(base, "2001:0DB8:00aa:0001::9")).status).to.equal(429);
      expect((await preview(base, "2001:db8:aa:2::1")).status).to.equal(400);
    });

    it("refuses badges to the client that used up its bucket with 429 and the unknown badge, while another address gets its answer", async () => {
      for (let i = 0; i < perClient; i++) expect((await badge(base, "198.51.100.9")).status).to.equal(503);
      const refused = await badge(base, "198.51.100.9");
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 60);
      expect(await refused.text()).to.match(/tests: unknown/);
      expect((await badge(base, "198.51.100.10")).status).to.equal(503);
    });
  });

  describe("with no trusted proxy (TRUST_PROXY_HOPS=0, the default)", () => {
    let base: string;
    let server: Server;
    before(async () => ({ base, server } = await consoleServer(0)));
    after(() => server.close());

    it("ignores X-Forwarded-For: a client cannot escape its bucket by writing a new address each time", async () => {
      for (let i = 0; i < perClient; i++)
        expect((await preview(base, `203.0.113.${i}`)).status).to.equal(400);
      for (let i = 0; i < 5; i++) expect((await preview(base, `203.0.113.${100 + i}`)).status).to.equal(429);
      expect((await badge(base, "203.0.113.200")).status).to.equal(503);
    });
  });

  it("takes nothing from the replica's bound for a request refused for its address", () => {
    const bounds = new AuthAttempts(5, 2, () => 0);
    const outcome = (address: string) => {
      const { retryAfter, client } = bounds.take(address);
      return retryAfter === 0 ? "let through" : client ? "address" : "server";
    };
    expect([outcome("192.0.2.1"), outcome("192.0.2.1")]).to.deep.equal(["let through", "let through"]);
    for (let i = 0; i < 50; i++) expect(outcome("192.0.2.1")).to.equal("address");
    // The replica's 5: 2 taken by the first address, 3 left for everyone else, then the server's bound.
    expect(["192.0.2.2", "192.0.2.2", "192.0.2.3", "192.0.2.4"].map(outcome)).to.deep.equal([
      "let through",
      "let through",
      "let through",
      "server",
    ]);
  });

  it("remembers a bounded number of addresses however many come", () => {
    const bounds = new AuthAttempts(1_000_000, 1);
    for (let i = 0; i < maxClientBuckets * 3; i++)
      bounds.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(bounds.clientsRemembered).to.equal(maxClientBuckets);
  });
});
