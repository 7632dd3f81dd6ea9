import { randomBytes } from "node:crypto";

/**
 * Fresh internal secrets for one test suite's services: the tokens, and the key-cache secret that
 * the keys service and the gateway must share.
 */
export function testTokens(): { SERVICE_TOKEN: string; EXECUTOR_TOKEN: string; KEY_CACHE_SECRET: string } {
  return {
    SERVICE_TOKEN: randomBytes(24).toString("base64url"),
    EXECUTOR_TOKEN: randomBytes(24).toString("base64url"),
    KEY_CACHE_SECRET: randomBytes(32).toString("base64url"),
  };
}
