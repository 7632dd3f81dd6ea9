/**
 * Each component's own Redis user on a local or test Redis, as the chart's Redis has them: what
 * `make run` and the tests set up through an admin connection, so that the system runs locally
 * with the permissions it has when deployed. The users and their rules are the registry's
 * (helm/testrun/services.yaml, scripts/services.ts `redisUsers`); this only applies them.
 *
 * A user's password is derived from the admin URL (HMAC-SHA256, keyed by it): every process that
 * knows the admin URL gets the same component URLs without passing them around, and creating
 * the users again (another test file, a second `make run`) changes nothing. That is only for local
 * and test servers: whoever holds the admin URL may do anything in Redis anyway. The chart
 * generates random passwords instead.
 */
import { createHmac } from "node:crypto";
import { Redis } from "ioredis";

/** The Redis user of a component: `testrun-<name>`, apart from any other users of a shared server. */
export const redisUserOf = (component: string): string => `testrun-${component}`;

export interface RedisUser {
  /** The Redis user name (redisUserOf). */
  user: string;
  /** ACL rules (keys, channels, commands) after `reset on` and the password. */
  rules: readonly string[];
}

/** The admin URL without its database number: the same server gives the same passwords. */
function serverOf(adminUrl: string): URL {
  const url = new URL(adminUrl);
  url.pathname = "";
  url.search = "";
  return url;
}

const passwordOf = (adminUrl: string, user: string): string =>
  createHmac("sha256", serverOf(adminUrl).toString()).update(`testrun redis user\n${user}`).digest("hex");

/**
 * The URL a component connects with: its user and password on the admin URL's server, with the
 * admin URL's database unless `db` is given.
 */
export function componentRedisUrl(adminUrl: string, component: string, db?: number): string {
  const user = redisUserOf(component);
  const url = new URL(adminUrl);
  url.username = user;
  url.password = passwordOf(adminUrl, user);
  if (db !== undefined) url.pathname = `/${db}`;
  return url.toString();
}

/**
 * Creates (or resets to exactly its rules) every user, through a connection that may run ACL
 * SETUSER: the admin URL (the default user of a throwaway server, or an administrator's URL).
 * Connections already open as a user keep working: the password does not change.
 */
export async function createRedisUsers(adminUrl: string, users: readonly RedisUser[]): Promise<void> {
  const admin = new Redis(adminUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await admin.connect();
    for (const { user, rules } of users) {
      await admin.call("ACL", "SETUSER", user, "reset", "on", `>${passwordOf(adminUrl, user)}`, ...rules);
    }
  } finally {
    admin.disconnect();
  }
}
