// The executor's side of the sandbox's only way out: a Unix socket (bound inside the namespace for
// its init's forwarder) whose every connection is joined to the executor's egress proxy on
// 127.0.0.1, which the namespace cannot reach. What the proxy allows is the egress guard's
// business (browser/egress-proxy.ts); this only carries bytes.
import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";

export interface ProxyBridge {
  close(): Promise<void>;
}

/**
 * Connections one sandbox may hold through its bridge at once; past them a new one is closed at
 * once. Without it one sandbox held thousands (256 processes of 1024 files each), two descriptors of
 * the executor's apiece, and the egress proxy's 1024 client connections, which every other test of
 * the executor shares. Chromium opens at most 32 to its proxy.
 */
export const maxBridgeConnections = 64;

export async function bridgeToProxy(
  socketPath: string,
  proxy: { host: string; port: number },
): Promise<ProxyBridge> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(proxy.port, proxy.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once("close", () => open.delete(socket));
    }
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  server.maxConnections = maxBridgeConnections;
  server.listen(socketPath);
  await once(server, "listening");
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
