// A scripted stand-in for the gateway, for the rules the unit tests check (what is retried, how
// often it reads): each request is answered by `answer`; every request is recorded with its time.
// The real gateway is in test/testrun-cli.e2e.test.ts.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Run, TestrunClient } from "@testrun/api-client";

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

export type Answer =
  | { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }
  | "drop";

export class FakeGateway {
  readonly requests: Recorded[] = [];
  /** When the client sent each request (ms since the epoch): the pacing rules are about these, and
   * the server's arrival times also carry connection set-up and scheduling on a busy machine. */
  readonly sentAt: number[] = [];
  answer: (request: Recorded, index: number) => Answer | Promise<Answer> = () => ({ status: 404 });
  private readonly server: Server;

  private constructor() {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const request = {
        method: req.method ?? "GET",
        url: req.url ?? "/",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      this.requests.push(request);
      const answer = await this.answer(request, this.requests.length - 1);
      if (answer === "drop") {
        req.socket.destroy();
        return;
      }
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      res
        .writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
        .end(answer.body === undefined ? "" : JSON.stringify(answer.body));
    });
  }

  static async start(): Promise<FakeGateway> {
    const gateway = new FakeGateway();
    gateway.server.listen(0, "127.0.0.1");
    await once(gateway.server, "listening");
    return gateway;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  client(): TestrunClient {
    const recordingFetch: typeof fetch = (input, init) => {
      this.sentAt.push(Date.now());
      return fetch(input, init);
    };
    return new TestrunClient({
      baseUrl: this.url,
      apiKey: `trk_${"a".repeat(46)}`,
      requestTimeoutMs: 5_000,
      fetch: recordingFetch,
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
  }
}

/** A run of two tests, RUNNING unless `status` says otherwise. */
export function fakeRun(status: Run["status"] = "RUNNING", id = "run_1"): Run {
  const finished = ["PASSED", "FAILED", "SKIPPED"].includes(status);
  const testStatus = finished ? status : "QUEUED";
  return {
    id,
    name: "Smoke",
    status,
    finished,
    totalTests: 2,
    passedTests: status === "PASSED" ? 2 : 0,
    failedTests: status === "FAILED" ? 1 : 0,
    startedAt: "2026-11-22T10:15:30.123Z",
    finishedAt: finished ? "2026-11-22T10:15:31.323Z" : null,
    durationMs: finished ? 1200 : null,
    skipReason: status === "SKIPPED" ? "environment_unreachable" : null,
    url: `http://console.example/projects/prj_1/runs/${id}`,
    tests: ["health answers", "log in"].map((name, i) => ({
      id: `tr_${i}`,
      testCaseId: `tc_${i}`,
      name,
      status: status === "FAILED" && i === 1 ? "FAILED" : status === "FAILED" ? "PASSED" : testStatus,
      durationMs: finished ? 600 : null,
      summary: status === "FAILED" && i === 1 ? 'step 1 "log in": expected status 200, got 401' : "",
      url: `http://console.example/projects/prj_1/runs/${id}/tests/tr_${i}`,
    })),
  };
}
