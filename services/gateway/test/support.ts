import { randomBytes } from "node:crypto";
import { type ServiceProcess, startServiceProcess } from "@testrun/kit/testing";
import { expect } from "chai";
import { expectDocumented } from "../../../test/openapi-check.js";

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

/** The gateway's "request" log line of a response, by its X-Request-Id. */
export async function requestLogLine(
  gateway: GatewayProcess,
  answer: { headers: Headers },
): Promise<Record<string, unknown>> {
  const requestId = String(answer.headers.get("x-request-id"));
  const line = await gateway.waitForLine((l) => l.includes(requestId) && l.includes('"msg":"request"'));
  return JSON.parse(line) as Record<string, unknown>;
}

/** A client address of its own, sent as X-Forwarded-For, so limits counted per address never collide between tests. */
export function freshAddress(): string {
  const [a = 0, b = 0, c = 0] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/**
 * One HTTP request to the gateway. Checks what holds for every response: an X-Request-Id, no
 * Access-Control-* header, a JSON body, and that it is as the OpenAPI document says.
 */
export async function call(
  base: string,
  path: string,
  init: RequestInit & { address?: string } = {},
): Promise<Answer> {
  const headers = new Headers(init.headers);
  headers.set("X-Forwarded-For", init.address ?? freshAddress());
  const response = await fetch(`${base}${path}`, { ...init, headers });
  const text = await response.text();
  expect(response.headers.get("x-request-id"), "X-Request-Id").to.be.a("string").and.not.be.empty;
  const cors = [...response.headers.keys()].filter((name) =>
    name.toLowerCase().startsWith("access-control-"),
  );
  expect(cors, "Access-Control-* headers").to.deep.equal([]);
  let body: Record<string, unknown> = {};
  if (init.method !== "HEAD") {
    expect(response.headers.get("content-type")).to.match(/^application\/json/);
    body = JSON.parse(text) as Record<string, unknown>;
  }
  expectDocumented({
    method: init.method ?? "GET",
    url: path,
    status: response.status,
    headers: response.headers,
    text,
  });
  return { status: response.status, headers: response.headers, body };
}

/** Asserts the error shape of docs/rest-api.md ("Errors"): `{ error: <message>, code }` and the status. */
export function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
  expect(answer.body.code).to.equal(code);
  expect(answer.body.error).to.be.a("string").and.not.be.empty;
}

/** A string shaped like an API key (trk_ + 46 base62 characters) that no keys service issued. */
export function keyShapedSecret(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  return `trk_${[...randomBytes(46)].map((byte) => alphabet[byte % 62]).join("")}`;
}
