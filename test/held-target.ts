// A system under test whose answers the test decides the moment of: a request to a held path waits
// until the test releases it, so a run stays RUNNING exactly as long as a test needs to watch or
// cancel it, without sleeps. Every other path answers 200 at once (the executors' reachability check).
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export class HeldTarget {
  /** Every request that arrived: path and headers. */
  readonly received: { path: string; headers: IncomingMessage["headers"] }[] = [];
  private readonly server: Server;
  private readonly held = new Map<string, { status: number; resolve: () => void; promise: Promise<void> }>();
  private readonly arrivals = new Map<string, Array<() => void>>();

  private constructor() {
    this.server = createServer(async (req, res) => {
      const path = req.url ?? "/";
      this.received.push({ path, headers: req.headers });
      for (const notify of this.arrivals.get(path) ?? []) notify();
      this.arrivals.delete(path);
      const hold = this.held.get(path);
      if (hold) await hold.promise;
      res.writeHead(hold?.status ?? 200, { "content-type": "application/json" }).end("{}");
    });
  }

  static async start(): Promise<HeldTarget> {
    const target = new HeldTarget();
    target.server.listen(0, "127.0.0.1");
    await once(target.server, "listening");
    return target;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Requests to `path` wait until `release` (then answer `status`). */
  hold(path: string, status = 200): () => void {
    let resolve = () => {};
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.held.set(path, { status, resolve, promise });
    return () => {
      this.held.delete(path);
      resolve();
    };
  }

  /** Resolves once a request to `path` has arrived (at once if one already did). */
  arrived(path: string): Promise<void> {
    if (this.received.some((r) => r.path === path)) return Promise.resolve();
    return new Promise((resolve) => {
      this.arrivals.set(path, [...(this.arrivals.get(path) ?? []), resolve]);
    });
  }

  async stop(): Promise<void> {
    for (const { resolve } of this.held.values()) resolve();
    this.server.closeAllConnections();
    this.server.close();
  }
}

/** A test case (YAML of docs/cli.md) of one GET step to `path`: hold the path to keep it running. */
export const heldCase = (name: string, tag: string, path: string) =>
  `- name: ${name}\n  tags: [${tag}]\n  steps:\n    - name: wait for it\n      http: { method: GET, path: "${path}" }\n`;
