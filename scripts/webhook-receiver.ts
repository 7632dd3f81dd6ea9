// A local webhook receiver (docs/automation.md, "Signatures"): records every request and checks
// its signature with the `standardwebhooks` package, an implementation independent of ours. Used
// by `make run` (the demo's receiver), the automation benchmark and the console's browser tests;
// the automation service reaches it because those systems set WEBHOOK_ALLOW_HTTP and allow
// loopback (scripts/system.ts).
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedWebhook {
  /** The `webhook-id` header: the same on every attempt of one delivery. */
  id: string;
  /** The event's type (`run.failed`, …), from the body; "" when the body is not JSON. */
  type: string;
  headers: IncomingMessage["headers"];
  body: string;
  /** Whether the signature verified with the secret set (false while none is set). */
  verified: boolean;
  /** Date.now() when the request ended. */
  receivedAt: number;
}

/** What the receiver does with a request: answer this status, or "hang" (never answer). */
export type Answer = number | "hang";

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** The secrets (`whsec_…`) signatures are checked against: any one verifying is enough. */
  setSecrets(secrets: string[]): void;
  answerWith(answer: Answer): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  options: { port?: number; path?: string; onReceived?: (webhook: ReceivedWebhook) => void } = {},
): Promise<WebhookReceiver> {
  const path = options.path ?? "/hook";
  const received: ReceivedWebhook[] = [];
  let verifiers: Webhook[] = [];
  let answer: Answer = 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = req.headers;
      const verified = verifiers.some((verifier) => {
        try {
          verifier.verify(body, headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      let type = "";
      try {
        type = String((JSON.parse(body) as { type?: unknown }).type ?? "");
      } catch {}
      const webhook = {
        id: String(headers["webhook-id"] ?? ""),
        type,
        headers,
        body,
        verified,
        receivedAt: Date.now(),
      };
      received.push(webhook);
      options.onReceived?.(webhook);
      if (req.url !== path) return res.writeHead(404).end("no such hook");
      // Left unanswered: the sender's timeout ends it (or close()).
      if (answer === "hang") return;
      res.writeHead(answer).end(answer >= 200 && answer < 300 ? "ok" : "broken");
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    received,
    setSecrets(secrets) {
      verifiers = secrets.map((secret) => new Webhook(secret.replace(/^whsec_/, "")));
    },
    answerWith(next) {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
