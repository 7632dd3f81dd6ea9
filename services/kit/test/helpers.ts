import { randomBytes } from "node:crypto";

/** Fresh internal tokens for one test suite's processes. */
export function testTokens(): { SERVICE_TOKEN: string; EXECUTOR_TOKEN: string } {
  return {
    SERVICE_TOKEN: randomBytes(24).toString("base64url"),
    EXECUTOR_TOKEN: randomBytes(24).toString("base64url"),
  };
}
