import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import {
  CatalogService,
  type CatalogService as CatalogServiceDesc,
  Role,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { newId, serviceClient } from "@testrun/kit";
import pg from "pg";
import { createMigratedTestDatabase } from "./migrated.js";
import { type ServiceProcess, startServiceProcess } from "./process.js";
import { componentRedisUrl } from "./redis-users.js";
import { testTokens } from "./tokens.js";

export type Catalog = Client<typeof CatalogServiceDesc>;

/**
 * A catalog on its own database, with clients for both internal identities: in the test's process
 * (`startInProcessCatalog` of @testrun/testing) or as a real process (`startCatalogProcess`).
 */
export interface CatalogHarness {
  /** The catalog's environment (its tokens, DATABASE_URL, …), as `runServiceCommand` takes it. */
  env: Record<string, string>;
  /** Calls with the service token (what the gateway, the CLI and other services present). */
  catalog: Catalog;
  /** Calls with the executor token. */
  executor: Catalog;
  /** Direct access to the catalog's database, to check what is stored. */
  db: pg.Client;
  /**
   * Resolves with the first log line, already written or still to come, that passes `test`. Log
   * lines travel on another pipe than RPC answers, so this waits for the line itself, not a time.
   */
  logLine(test: (line: string) => boolean): Promise<string>;
  stop(): Promise<void>;
}

/** A catalog started as a real process. */
export interface CatalogProcess extends CatalogHarness {
  process: ServiceProcess;
}

export function catalogClient(url: string, token: string): Catalog {
  return serviceClient(CatalogService, url, { token, timeoutMs: 30_000 });
}

/**
 * Migrates a fresh database and starts the catalog as a real process. The keys service is not
 * running: KEYS_URL points at a port where nothing listens, as when the keys service is down.
 */
export async function startCatalogProcess(extraEnv: Record<string, string> = {}): Promise<CatalogProcess> {
  const tokens = testTokens();
  const env: Record<string, string> = {
    ...tokens,
    // Migrated for the catalog and billing (the runs harness starts billing on it too).
    DATABASE_URL: await createMigratedTestDatabase(["catalog", "billing"]),
    KEYS_URL: "http://127.0.0.1:1",
    // As deployed: the catalog's own Redis user (test/global-setup.ts made it).
    REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "catalog"),
    VARIABLES_KEY: randomBytes(32).toString("base64"),
    ...extraEnv,
  };
  const waiting = new Set<{ test: (line: string) => boolean; resolve: (line: string) => void }>();
  const process_ = await startServiceProcess("catalog", env, {
    onLine: (line) => {
      for (const waiter of waiting) {
        if (waiter.test(line)) {
          waiting.delete(waiter);
          waiter.resolve(line);
        }
      }
    },
  });
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  return {
    process: process_,
    env,
    catalog: catalogClient(process_.url, tokens.SERVICE_TOKEN),
    executor: catalogClient(process_.url, tokens.EXECUTOR_TOKEN),
    db,
    logLine(test) {
      const seen = process_.output().find(test);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.add({ test, resolve }));
    },
    async stop() {
      await db.end();
      await process_.stop("SIGTERM");
    },
  };
}

export const operator = (): Actor =>
  create(ActorSchema, { kind: { case: "operator", value: { name: "test" } } });

export const member = (id: string): Actor => create(ActorSchema, { kind: { case: "memberId", value: id } });

/** An API key actor as the gateway builds it from a VALID VerifyKey answer. */
export const apiKey = (creatorMemberId: string, projectId: string, createdAt = new Date()): Actor =>
  create(ActorSchema, {
    kind: {
      case: "apiKey",
      value: { keyId: newId("key"), creatorMemberId, projectId, keyCreatedAt: timestampFromDate(createdAt) },
    },
  });

/** Resolves with the ConnectError the call failed with; fails the test if it succeeded or the code differs. */
export async function rejects(call: Promise<unknown>, code: Code): Promise<ConnectError> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => ConnectError.from(error),
  );
  // node:assert, not chai: this module ships in the kit's `testing` export, which the production
  // image's dependencies must resolve (test/image.test.ts), and chai is a test-only dependency.
  assert.ok(outcome instanceof ConnectError, `expected ${Code[code]}, but the call succeeded`);
  const error = outcome as ConnectError;
  assert.equal(Code[error.code], Code[code], error.rawMessage);
  return error;
}

let counter = 0;
export const unique = (what: string) => `${what} ${++counter} ${randomBytes(3).toString("hex")}`;

/** An organization whose first member is an OWNER, plus one member of each other role and a project. */
export async function seedOrganization(catalog: Catalog) {
  const { organization, owner } = await catalog.createOrganization({
    actor: operator(),
    name: unique("org"),
    ownerEmail: `${unique("owner").replaceAll(" ", ".")}@example.com`,
    ownerDisplayName: "Olga Owner",
  });
  const orgId = organization?.id ?? "";
  const add = async (role: Role) =>
    (
      await catalog.addMember({
        actor: operator(),
        organizationId: orgId,
        email: `${unique(Role[role].toLowerCase()).replaceAll(" ", ".")}@example.com`,
        displayName: `A ${Role[role].toLowerCase()}`,
        role,
      })
    ).member?.id ?? "";
  const members = {
    owner: owner?.id ?? "",
    admin: await add(Role.ADMIN),
    editor: await add(Role.EDITOR),
    viewer: await add(Role.VIEWER),
  };
  return { orgId, members, projectId: await newProject(catalog, orgId) };
}

/** A new project of the organization, made by an operator; its id. */
export async function newProject(catalog: Catalog, organizationId: string): Promise<string> {
  const { project } = await catalog.createProject({
    actor: operator(),
    organizationId,
    name: unique("project"),
    description: "",
  });
  return project?.id ?? "";
}

/** A valid one-step HTTP test case body. */
export const httpStep = (path = "/health") => ({
  name: "call",
  kind: {
    case: "http" as const,
    value: { request: { method: "GET", path }, expect: { status: [200] } },
  },
});
