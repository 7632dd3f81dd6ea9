import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { EgressGuard, EgressPolicy } from "@testrun/kit/egress";
import { findFreePort } from "@testrun/testing";
import { expect } from "chai";
import { checkReachable } from "../src/steps/reachability.js";
import { localEgress, startTestTarget } from "./target.js";

describe("environment reachability check", () => {
  // The same reason every time; only the operator's log tells the causes apart.
  const reason = "no HTTP answer from the base URL";
  const unreachable = (cause: string) => ({ reachable: false, reason, cause });

  it("counts any HTTP answer, even a 404 at the base URL", async () => {
    const target = await startTestTarget();
    try {
      expect(await checkReachable(`${target.url}/no-such-base`, localEgress)).to.deep.equal({
        reachable: true,
      });
    } finally {
      await target.close();
    }
  });

  // One outcome for every failure, so the check cannot tell a closed port from a silent one, an
  // unknown host or an address the executors may not reach: no port scanner.
  it("does not count a refused connection", async () => {
    const port = await findFreePort();
    expect(await checkReachable(`http://127.0.0.1:${port}`, localEgress)).to.deep.equal(
      unreachable("ECONNREFUSED"),
    );
  });

  it("does not count an unknown host, and says the same", async () => {
    // ENOTFOUND, or EAI_AGAIN where no resolver answers: the reason is the same.
    const outcome = await checkReachable("http://no-such-host.invalid", localEgress, 2_000);
    expect(outcome).to.include({ reachable: false, reason });
  });

  it("does not count a server that accepts the connection but never answers, and says the same", async () => {
    const silent: Server = createServer(() => {});
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    const address = silent.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      expect(await checkReachable(`http://127.0.0.1:${port}`, localEgress, 200)).to.deep.equal(
        unreachable("TimeoutError"),
      );
    } finally {
      silent.close();
    }
  });

  it("does not count an address the egress policy refuses, says the same, and sends it nothing", async () => {
    const target = await startTestTarget();
    const strict = new EgressGuard(new EgressPolicy());
    try {
      expect(await checkReachable(target.url, strict)).to.deep.equal(unreachable("EGRESS_REFUSED"));
      expect(target.hits).to.deep.equal([]);
    } finally {
      await strict.close();
      await target.close();
    }
  });
});
