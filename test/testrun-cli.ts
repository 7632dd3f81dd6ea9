// What the `testrun` end-to-end suites share: the CLI as a child process, exactly as a pipeline runs
// it, and a small HTTP proxy in front of the gateway that can answer a POST the way a failing
// gateway or network would.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { repoRoot } from "@testrun/testing";

export const testrunBin = `${repoRoot}services/testrun-cli/bin/testrun`;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running `testrun`: its process, its output so far, and its end. */
export interface CliProcess {
  child: ChildProcess;
  output(): CliRun;
  /** Resolves once stdout contains `text`. */
  printed(text: string | RegExp): Promise<void>;
  done: Promise<CliRun>;
}

/** Environment of a CLI run: only what a CI job would set, plus PATH. */
export const cliEnv = (url: string, key: string, more: Record<string, string> = {}) => ({
  PATH: String(process.env.PATH),
  TESTRUN_URL: url,
  TESTRUN_API_KEY: key,
  ...more,
});

export function startCli(args: string[], env: Record<string, string>, file = testrunBin): CliProcess {
  const command = file.endsWith(".mjs") ? process.execPath : file;
  const argv = file.endsWith(".mjs") ? [file, ...args] : args;
  const child = spawn(command, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters: { text: string | RegExp; resolve: () => void }[] = [];
  const seen = (text: string | RegExp) =>
    typeof text === "string" ? stdout.includes(text) : text.test(stdout);
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
    for (const waiter of waiters.filter((w) => seen(w.text))) {
      waiter.resolve();
      waiters.splice(waiters.indexOf(waiter), 1);
    }
  });
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  const output = () => ({ code: child.exitCode, stdout, stderr });
  // "close", not "exit": all of the output has arrived.
  const done = once(child, "close").then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return {
    child,
    output,
    done,
    printed: (text) =>
      seen(text)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ text, resolve });
            void done.then(() =>
              reject(new Error(`testrun ended without printing ${text}:\n${stdout}${stderr}`)),
            );
          }),
  };
}

/** Runs `testrun` to its end. */
export const runCli = (args: string[], env: Record<string, string>, file?: string) =>
  startCli(args, env, file).done;

/** What the proxy does with one request; undefined forwards it as it is. */
export type Intercept = (
  request: { method: string; path: string; body: string; headers: IncomingMessage["headers"] },
  forward: () => Promise<Forwarded>,
) => Promise<{ status: number; body: string } | "drop" | undefined>;

/** The gateway's answer: `body` as text, `bytes` exactly as sent (an artifact's, say). */
export interface Forwarded {
  status: number;
  headers: Headers;
  body: string;
  bytes: Buffer;
}

/** An HTTP proxy in front of the gateway that counts requests and may answer some itself. */
export class GatewayProxy {
  readonly requests: { method: string; path: string; headers: IncomingMessage["headers"] }[] = [];
  intercept: Intercept | undefined;
  private readonly server: Server;

  private constructor(private readonly target: string) {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString("utf8");
      const request = { method: req.method ?? "GET", path: req.url ?? "/", body, headers: req.headers };
      this.requests.push({ method: request.method, path: request.path, headers: req.headers });
      const forward = async (): Promise<Forwarded> => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === "string" && !["host", "connection", "content-length"].includes(name))
            headers.set(name, value);
        }
        const answer = await fetch(`${this.target}${request.path}`, {
          method: request.method,
          headers,
          ...(body && { body }),
        });
        const bytes = Buffer.from(await answer.arrayBuffer());
        return { status: answer.status, headers: answer.headers, body: bytes.toString("utf8"), bytes };
      };
      const own = await this.intercept?.(request, forward);
      if (own === "drop") {
        req.socket.destroy();
        return;
      }
      const answer = own ?? (await forward());
      const headers: Record<string, string> = { "content-type": "application/json" };
      if ("headers" in answer && answer.headers instanceof Headers) {
        // Every header of the gateway's answer but those about this one connection.
        for (const [name, value] of answer.headers) {
          if (
            !["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"].includes(
              name,
            )
          )
            headers[name] = value;
        }
      }
      // The gateway's own answer goes on byte for byte; one of the intercept's as its text.
      res.writeHead(answer.status, headers).end("bytes" in answer ? answer.bytes : answer.body);
    });
  }

  static async start(target: string): Promise<GatewayProxy> {
    const proxy = new GatewayProxy(target);
    proxy.server.listen(0, "127.0.0.1");
    await once(proxy.server, "listening");
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  count(method: string, path: string | RegExp): number {
    return this.requests.filter(
      (r) => r.method === method && (typeof path === "string" ? r.path === path : path.test(r.path)),
    ).length;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
  }
}
