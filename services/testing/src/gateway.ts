import { randomBytes } from "node:crypto";
import { type ServiceProcess, startServiceProcess } from "./process.js";

/** A gateway running as a real process, with the address of its /v1 HTTP server. */
export interface GatewayProcess extends ServiceProcess {
  /** http://127.0.0.1:HTTP_PORT */
  readonly http: string;
  /** Resolves with the first log line (already written or still to come) that satisfies the test. */
  waitForLine(test: (line: string) => boolean, timeoutMs?: number): Promise<string>;
}

/** Starts the gateway on free ports (gRPC health and HTTP). */
export async function startGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const listeners = new Set<(line: string) => void>();
  const gateway = await startServiceProcess(
    "gateway",
    { HTTP_PORT: "0", ...env },
    {
      onLine: (line) => {
        for (const listener of listeners) listener(line);
      },
    },
  );
  // setup() logs the HTTP port before the gRPC server logs "listening", so it is in the output now.
  const line = gateway.output().find((l) => l.includes('"msg":"http listening"'));
  const port = line ? (JSON.parse(line) as { httpPort?: number }).httpPort : undefined;
  if (!port) throw new Error(`gateway logged no HTTP port:\n${gateway.output().join("\n")}`);
  // A log line is written before the response is sent, but reaches this process through a pipe
  // of its own: wait for it rather than expect it to be there already.
  const waitForLine = (test: (line: string) => boolean, timeoutMs = 5_000) =>
    new Promise<string>((resolve, reject) => {
      const found = gateway.output().find(test);
      if (found !== undefined) return resolve(found);
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`no such log line within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (candidate: string) => {
        if (!test(candidate)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve(candidate);
      };
      listeners.add(listener);
    });
  return Object.assign(gateway, { http: `http://127.0.0.1:${port}`, waitForLine });
}

/** A string shaped like an API key (trk_ + 46 base62 characters) that no keys service issued. */
export function keyShapedSecret(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  return `trk_${[...randomBytes(46)].map((byte) => alphabet[byte % 62]).join("")}`;
}
