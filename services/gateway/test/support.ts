import { randomBytes } from "node:crypto";
import type { GatewayProcess } from "@testrun/testing";
import { expect } from "chai";
import { expectDocumented } from "../../../test/openapi-check.js";

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
