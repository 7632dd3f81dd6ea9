import { userInfo } from "node:os";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { ConsoleAdminService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { serviceClient } from "@testrun/kit";
import { serviceCallError, UsageError } from "./errors.js";

/** The local defaults of `make run` (README.md, "Ports"). */
export const defaultUrls = {
  KEYS_URL: "http://127.0.0.1:7101",
  CATALOG_URL: "http://127.0.0.1:7102",
  BILLING_URL: "http://127.0.0.1:7103",
  CONSOLE_URL: "http://127.0.0.1:7106",
} as const;

/** Deadline of every call: an operator waiting on a hung service should hear about it. */
const callTimeoutMs = 10_000;

/** What every command needs: clients of the services and the operator acting. */
export interface CliContext {
  catalog: Client<typeof CatalogService>;
  keys: Client<typeof KeysService>;
  billing: Client<typeof BillingService>;
  /** The console's internal API (sign-in links). */
  console: Client<typeof ConsoleAdminService>;
  actor: MessageInitShape<typeof ActorSchema>;
}

/**
 * Clients of the services from the environment (SERVICE_TOKEN; KEYS_URL, CATALOG_URL,
 * BILLING_URL, CONSOLE_URL with the local defaults), acting as an operator named after the OS user.
 * A UsageError names a missing or malformed variable without echoing its value.
 */
export function createCliContext(env: NodeJS.ProcessEnv = process.env): CliContext {
  const token = env.SERVICE_TOKEN;
  if (!token) {
    throw new UsageError(
      "SERVICE_TOKEN is not set: testrunctl authenticates to the services with the service token",
    );
  }
  const url = (name: keyof typeof defaultUrls) => {
    const value = env[name] || defaultUrls[name];
    if (!/^https?:\/\/[^/]+\/?$/.test(value)) throw new UsageError(`${name} must be like http://host:port`);
    return value.replace(/\/$/, "");
  };
  const options = { token, timeoutMs: callTimeoutMs };
  return {
    catalog: named("catalog", url("CATALOG_URL"), serviceClient(CatalogService, url("CATALOG_URL"), options)),
    keys: named("keys", url("KEYS_URL"), serviceClient(KeysService, url("KEYS_URL"), options)),
    billing: named("billing", url("BILLING_URL"), serviceClient(BillingService, url("BILLING_URL"), options)),
    console: named(
      "console",
      url("CONSOLE_URL"),
      serviceClient(ConsoleAdminService, url("CONSOLE_URL"), options),
    ),
    actor: operatorActor(),
  };
}

/** The operator actor: the services record the name in audit logs (at most 100 characters). */
export function operatorActor(name = osUserName()): MessageInitShape<typeof ActorSchema> {
  return { kind: { case: "operator", value: { name: name.slice(0, 100) } } };
}

function osUserName(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry for the uid (some containers): fall back to what the shell says.
    return process.env.USER ?? process.env.LOGNAME ?? "testrunctl";
  }
}

/** Makes every failed call of a client a ServiceCallError naming the service, its URL and the method. */
function named<C extends object>(service: string, url: string, client: C): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      const method = String(property);
      return async (...args: unknown[]) => {
        try {
          return await value.apply(target, args);
        } catch (error) {
          throw serviceCallError(service, url, method.charAt(0).toUpperCase() + method.slice(1), error);
        }
      };
    },
  });
}
