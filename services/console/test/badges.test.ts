// The console's public status badge (services/console/src/http/badges.ts): the SVG of each state,
// and the route's answers that need no automation service behind it (a malformed token, the service
// away), over real HTTP. A badge read through the whole system, and a revoked one, are in
// test/console-automation.browser.test.ts.
import type { AddressInfo } from "node:net";
import Router from "@koa/router";
import { AutomationService, BadgeState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { createLogger, serviceClient } from "@testrun/kit";
import { findFreePort } from "@testrun/testing";
import { expect } from "chai";
import Koa from "koa";
import { AuthAttempts } from "../src/http/auth-limit.js";
import {
  badgeCacheControl,
  badgePolicy,
  badgeRoutes,
  badgeSvg,
  loggedBadgePath,
} from "../src/http/badges.js";

/** The words and the colour of the message's half of a badge (badge-maker 6's brightgreen, red, lightgrey). */
function shows(svg: string) {
  const label = /aria-label="([^"]*)"/.exec(svg)?.[1];
  const fills = [...svg.matchAll(/<rect [^>]*fill="(#[0-9a-f]+)"/g)].map((m) => m[1]);
  return { label, messageFill: fills[1] };
}

describe("console status badge", () => {
  it("says passing in green, failing in red and unknown in grey, labelled tests", () => {
    expect(shows(badgeSvg(BadgeState.PASSING))).to.deep.equal({
      label: "tests: passing",
      messageFill: "#4b0",
    });
    expect(shows(badgeSvg(BadgeState.FAILING))).to.deep.equal({
      label: "tests: failing",
      messageFill: "#dd4343",
    });
    expect(shows(badgeSvg(BadgeState.UNKNOWN))).to.deep.equal({
      label: "tests: unknown",
      messageFill: "#939393",
    });
    // An unset state (a newer service's unknown value) shows as unknown, never as passing.
    expect(shows(badgeSvg(BadgeState.UNSPECIFIED)).label).to.equal("tests: unknown");
  });

  it("is an SVG with no script, style or link in it", () => {
    for (const state of [BadgeState.PASSING, BadgeState.FAILING, BadgeState.UNKNOWN]) {
      const svg = badgeSvg(state);
      expect(svg.startsWith("<svg ")).to.equal(true);
      expect(svg).not.to.match(/<script|<style|<a |href=/i);
    }
  });

  it("keeps a badge's token out of the paths it logs", () => {
    expect(loggedBadgePath("/badges/abcDEF_123-xyz.svg")).to.equal("/badges/[token].svg");
    expect(loggedBadgePath("/projects/prj_1/runs")).to.equal("/projects/prj_1/runs");
  });

  describe("route", () => {
    let server: import("node:http").Server;
    let base: string;
    before(async () => {
      // Nothing listens where the automation service is said to be: it is away.
      const away = `http://127.0.0.1:${await findFreePort()}`;
      const router = new Router();
      badgeRoutes(router, {
        automation: serviceClient(AutomationService, away, { token: "t".repeat(32), timeoutMs: 2_000 }),
        badgeRequests: new AuthAttempts(2),
        logger: createLogger("console-badges-test", "silent"),
      });
      const app = new Koa().use(router.routes());
      server = app.listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => server.close());

    it("answers a malformed token 404 with the unknown badge, an image with a strict policy, readable cross-site", async () => {
      const response = await fetch(`${base}/badges/${encodeURIComponent("not a token")}.svg`);
      expect(response.status).to.equal(404);
      expect(response.headers.get("content-type")).to.equal("image/svg+xml; charset=utf-8");
      expect(response.headers.get("content-security-policy")).to.equal(badgePolicy);
      expect(response.headers.get("cache-control")).to.equal(badgeCacheControl);
      expect(response.headers.get("cross-origin-resource-policy")).to.equal("cross-origin");
      expect(shows(await response.text()).label).to.equal("tests: unknown");
    });

    it("answers 503 with the unknown badge, never cached, while the automation service is away; 429 past its bound", async () => {
      const response = await fetch(`${base}/badges/abcdefghijklmnopqrstuvwxyz012345.svg`);
      expect(response.status).to.equal(503);
      expect(response.headers.get("cache-control")).to.equal("no-store");
      expect(shows(await response.text()).label).to.equal("tests: unknown");
      // The bucket held two requests, both taken above.
      const limited = await fetch(`${base}/badges/abcdefghijklmnopqrstuvwxyz012345.svg`);
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get("retry-after"))).to.be.greaterThan(0);
      expect(shows(await limited.text()).label).to.equal("tests: unknown");
    });
  });
});
