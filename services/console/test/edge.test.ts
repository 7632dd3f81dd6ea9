// The console's HTTP port refuses from the headers (docs/security.md, "Resource limits"): a call to
// its browser API without a session cookie is answered 401 before its body is read, and the
// connection closes, so a slow anonymous body holds nothing. The console's application served by
// the same bounded HTTP server its main.ts uses (kit http-server.ts); the services behind it are
// never reached.
import { once } from "node:events";
import type { Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { boundedHttpServer, defaultHttpLimits } from "@testrun/kit";
import { expect } from "chai";
import { createConsoleApp } from "../src/http/app.js";
import { appUrl, appWithNothingBehind } from "./edge-app.js";

/** Writes `head` on a new connection; resolves with what came back once the console closed it, and when. */
async function exchange(port: number, head: string) {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  let text = "";
  let firstByteAt = Number.NaN;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    if (!text) firstByteAt = performance.now();
    text += chunk;
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve) => socket.write(head, () => resolve()));
  const sentAt = performance.now();
  await closed;
  return { text, ms: firstByteAt - sentAt };
}

describe("console edge: refused from the headers, connection closed", () => {
  let server: Server;
  let port: number;

  before(async () => {
    const options = await appWithNothingBehind("console-edge-test", { perClient: 1000, trustProxyHops: 0 });
    server = boundedHttpServer(createConsoleApp(options).callback(), defaultHttpLimits);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
    // The first request of a process is slower (its code is compiled then): not the one timed.
    await fetch(`http://127.0.0.1:${port}/healthz`);
  });
  after(() => server?.close());

  it("answers a browser API call without a session cookie 401 within 100 ms while its body never comes, and closes", async () => {
    const { text, ms } = await exchange(
      port,
      `POST /api/testrun.console.v1.ConsoleService/ListProjects HTTP/1.1\r\nHost: console.test\r\nOrigin: ${appUrl}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`,
    );
    expect(text).to.match(/^HTTP\/1\.1 401 /);
    expect(text).to.match(/^Connection: close\r$/im);
    expect(ms, "ms from headers to answer").to.be.below(100);
  });

  it("answers a cross-site write 403 from its headers and closes, its body unread", async () => {
    const { text } = await exchange(
      port,
      "POST /auth/sign-out HTTP/1.1\r\nHost: console.test\r\nOrigin: https://elsewhere.test\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{",
    );
    expect(text).to.match(/^HTTP\/1\.1 403 /);
    expect(text).to.match(/^Connection: close\r$/im);
  });
});
