import { createHmac, timingSafeEqual } from "node:crypto";

/** What one grant lets an executor read: the variable values of one project, for one test. */
export interface GrantScope {
  projectId: string;
  testResultId: string;
}

/** Separates this use of SERVICE_TOKEN from any other key derived from it. */
const purpose = "testrun variables grant v1";

/**
 * Grants to read a project's variable values for one test. The runs service issues one with every
 * claim (TestAssignment.variables_grant); the catalog checks it in GetVariableValues. Both hold
 * SERVICE_TOKEN and executors do not, so an executor, or whoever took its EXECUTOR_TOKEN, reads
 * values only for a test the runs service just gave it, not for any project it cares to name.
 * Format: `<expiry, ms since the epoch>.<HMAC-SHA256 of scope and expiry, base64url>`.
 */
export class VariablesGrants {
  readonly #key: Buffer;

  constructor(serviceToken: string) {
    this.#key = createHmac("sha256", serviceToken).update(purpose).digest();
  }

  issue(scope: GrantScope, validForMs: number, now = Date.now()): string {
    const expiresAt = now + validForMs;
    return `${expiresAt}.${this.#mac(scope, expiresAt).toString("base64url")}`;
  }

  check(grant: string, scope: GrantScope, now = Date.now()): "valid" | "expired" | "invalid" {
    const match = /^(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(grant);
    if (!match) return "invalid";
    const expiresAt = Number(match[1]);
    const expected = this.#mac(scope, expiresAt);
    if (!timingSafeEqual(Buffer.from(match[2] as string, "base64url"), expected)) return "invalid";
    return now < expiresAt ? "valid" : "expired";
  }

  #mac({ projectId, testResultId }: GrantScope, expiresAt: number): Buffer {
    return createHmac("sha256", this.#key).update(`${projectId}\n${testResultId}\n${expiresAt}`).digest();
  }
}
