import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { findFreePort } from "@testrun/kit/testing";
import { expect } from "chai";
import { checkReachable } from "../src/steps/reachability.js";
import { startTestTarget } from "./target.js";

describe("environment reachability check", () => {
  it("counts any HTTP answer, even a 404 at the base URL", async () => {
    const target = await startTestTarget();
    try {
      expect(await checkReachable(`${target.url}/no-such-base`)).to.deep.equal({ reachable: true });
    } finally {
      await target.close();
    }
  });

  it("does not count a refused connection", async () => {
    const port = await findFreePort();
    expect(await checkReachable(`http://127.0.0.1:${port}`)).to.deep.equal({
      reachable: false,
      reason: "connection refused",
    });
  });

  it("does not count a server that accepts the connection but never answers", async () => {
    const silent: Server = createServer(() => {});
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    const address = silent.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      expect(await checkReachable(`http://127.0.0.1:${port}`, 200)).to.deep.equal({
        reachable: false,
        reason: "no answer within 200 ms",
      });
    } finally {
      silent.close();
    }
  });
});
