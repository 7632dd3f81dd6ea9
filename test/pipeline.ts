// What the end-to-end runs suites do as a pipeline would: REST calls through the real gateway with
// a project API key, runs polled until they finish, and projects of their own to do it in.
import {
  createCliContext,
  createEnvironment,
  createKey,
  createOrganization,
  createProject,
  createTestCases,
  grantCredits,
  readTestCaseFile,
} from "@testrun/cli";
import {
  createMigratedTestDatabase,
  eventually,
  type GatewayProcess,
  keepForTestProcess,
  startGateway,
} from "@testrun/testing";
import { expect } from "chai";
import { type System, type SystemOptions, startSystem, systemServices } from "../scripts/system.js";
import { expectDocumented } from "./openapi-check.js";

export interface TestResultBody {
  id: string;
  testCaseId: string;
  name: string;
  status: string;
  durationMs: number | null;
  summary: string;
  url: string;
  artifacts: ArtifactBody[];
  /** Every attempt with what it stored (docs/rest-api.md, "Attempts, retries and causes"). */
  attempts?: { number: number; status: string; cause: string | null; artifacts: ArtifactBody[] }[];
}

export interface ArtifactBody {
  id: string;
  kind: "screenshot" | "trace" | "browser_log" | "http_response";
  name: string;
  contentType: string;
  size: number;
  step: number;
  url: string;
}

export interface RunBody {
  id: string;
  name: string;
  status: string;
  finished: boolean;
  totalTests: number;
  passedTests: number;
  failedTests: number;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  skipReason: string | null;
  url: string;
  tests: TestResultBody[];
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A REST client holding one project API key; every answer is checked against the OpenAPI document. */
export class Pipeline {
  /** Every response body received, so a suite can check that no secret ever appeared in one. */
  readonly responses: string[] = [];

  constructor(
    private readonly gatewayUrl: string,
    readonly key: string,
  ) {}

  async call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const res = await fetch(`${this.gatewayUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.key}`,
        ...(body !== undefined && { "content-type": "application/json" }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    this.responses.push(text);
    expectDocumented({ method, url: path, status: res.status, headers: res.headers, text });
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, headers: res.headers };
  }

  /** POST /v1/runs, expecting 201. */
  async start(body: unknown): Promise<RunBody> {
    const started = await this.call("POST", "/v1/runs", body);
    expect(started.status, JSON.stringify(started.body)).to.equal(201);
    return started.body as unknown as RunBody;
  }

  async getRun(id: string): Promise<RunBody> {
    const answer = await this.call("GET", `/v1/runs/${id}`);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body as unknown as RunBody;
  }

  /** Polls the run, as a pipeline does (the contract has no push), until it can no longer change. */
  finished(id: string): Promise<RunBody> {
    return eventually(
      async () => {
        const run = await this.getRun(id);
        return run.finished ? run : undefined;
      },
      `run ${id} to finish`,
      30_000,
    );
  }

  /** Polls the run until one of its tests is RUNNING: an executor holds it. */
  running(id: string): Promise<RunBody> {
    return eventually(async () => {
      const run = await this.getRun(id);
      return run.tests.some((t) => t.status === "RUNNING") ? run : undefined;
    }, `a test of run ${id} to run`);
  }
}

/** The services with a database, in start order: what a system's database is migrated for. */
const migratingServices = systemServices.filter((service) => service.database).map((service) => service.name);

/**
 * The whole system for one end-to-end suite: a database of its own, REDIS_URL (unless `redisUrl`
 * is given), free ports, and a rate limit a suite polling runs to their end stays under (the
 * production 60 requests a minute would not do); `extraEnv` and `serviceEnv` on top.
 */
export async function startTestSystem(options: Partial<SystemOptions> = {}): Promise<System> {
  // A database of its own, copied from one the services' migrations were applied to once.
  const migrated = options.databaseUrl === undefined;
  return startSystem({
    databaseUrl: options.databaseUrl ?? (await createMigratedTestDatabase(migratingServices)),
    migrated,
    redisUrl: String(process.env.REDIS_URL),
    ports: "free",
    owner: "a suite's own system (startTestSystem)",
    ...options,
    // Every client of the tests is 127.0.0.1: one address's share of sign-ins (60 a minute in
    // production) would make the suites sharing a console wait for each other.
    extraEnv: {
      RATE_LIMIT_PER_MINUTE: "100000",
      AUTH_REQUESTS_PER_CLIENT_PER_MINUTE: "600",
      ...options.extraEnv,
    },
  });
}

let sharedSystem: Promise<System> | undefined;
/** Above the databases other harnesses use (the runs stacks take 5). */
const sharedSystemRedisDb = 13;

/**
 * The whole system with startTestSystem's defaults, shared by the suites of one test process that
 * need nothing of their own: each works in a project (and organization) of its own, and none stops,
 * restarts or reconfigures a service, flushes Redis, or reads a figure of the whole system. Starting a system costs
 * some seconds of both cores; a suite that needs other settings, or stops a service, starts its own.
 * Started on first use, and stopped when the test process ends (services/testing/src/process-scope.ts).
 */
export function sharedTestSystem(): Promise<System> {
  sharedSystem ??= startSharedSystem();
  return sharedSystem;
}

/**
 * The shared system's Redis database, with the administrator's URL: a database of its own, so that
 * a suite's own system, started meanwhile on the same server, does not take this one's tests from
 * its stream (Pub/Sub notices carry run ids, which do not clash).
 */
export function sharedSystemRedisUrl(): string {
  const redisUrl = new URL(String(process.env.REDIS_URL));
  redisUrl.pathname = `/${sharedSystemRedisDb}`;
  return redisUrl.toString();
}

/**
 * A gateway of its own in front of the shared system (its services, its Redis, its secrets), with
 * `env` on top: for a suite whose only need of its own is a gateway setting (a small rate limit,
 * fewer waits per key), one process instead of a whole system. The suite stops it.
 */
export async function gatewayOnSharedSystem(
  env: Record<string, string>,
): Promise<{ system: System; gateway: GatewayProcess }> {
  const system = await sharedTestSystem();
  const gateway = await startGateway({
    ...system.serviceEnvs.get("gateway"),
    // Ports of its own: the shared system's gateway has those it was started with.
    PORT: "0",
    HTTP_PORT: "0",
    METRICS_PORT: "0",
    ...env,
  });
  return { system, gateway };
}

async function startSharedSystem(): Promise<System> {
  try {
    // Its services' unexpected exits are reported on stderr under this name: a suite that finds
    // one gone (ECONNREFUSED) can be traced to the report written when it went.
    const system = await startTestSystem({
      redisUrl: sharedSystemRedisUrl(),
      owner: `the shared system of test process ${process.pid}`,
    });
    keepForTestProcess({
      stop: () => system.stop(),
      kill: () => {
        for (const child of system.processes.values()) child.process.kill("SIGKILL");
      },
    });
    return system;
  } catch (error) {
    // A failed start fails the suite that asked; the next one tries again.
    sharedSystem = undefined;
    throw error;
  }
}

export interface TestProject {
  projectId: string;
  ownerId: string;
  pipeline: Pipeline;
}

export interface ProjectOptions {
  credits: number;
  /** Whether the environment "demo" is the project's default (else it has none). */
  defaultEnvironment?: boolean;
}

/**
 * A project of its own, made with the admin CLI: an organization and its owner, an environment
 * "demo" on the demo target, credits and an API key of the owner.
 */
export async function newProject(
  system: System,
  name: string,
  { credits, defaultEnvironment = true }: ProjectOptions,
): Promise<TestProject> {
  const ctx = createCliContext(system.env);
  const { organization, owner } = await createOrganization(ctx, {
    name,
    ownerEmail: `owner@${name.replaceAll(" ", "-")}.example`,
    ownerName: "Owner",
  });
  const project = await createProject(ctx, { organizationId: organization?.id ?? "", name });
  await createEnvironment(ctx, {
    projectId: project.id,
    name: "demo",
    baseUrl: system.demoTargetUrl,
    isDefault: defaultEnvironment,
  });
  if (credits > 0)
    await grantCredits(ctx, { projectId: project.id, amount: credits, reason: "test credits" });
  const ownerId = owner?.id ?? "";
  const { secret } = await createKey(ctx, {
    projectId: project.id,
    name: "pipeline",
    creatorMemberId: ownerId,
  });
  return { projectId: project.id, ownerId, pipeline: new Pipeline(system.gatewayUrl, secret) };
}

/** Adds the test cases of a file in the format of docs/cli.md. */
export function addCases(system: System, projectId: string, yaml: string) {
  return createTestCases(createCliContext(system.env), {
    projectId,
    testCases: readTestCaseFile(yaml, "cases.yaml"),
  });
}

/** One test case of one GET step, expecting 200. */
export const getCase = (name: string, tag: string, path: string) =>
  `- name: ${name}\n  tags: [${tag}]\n  steps:\n    - name: get it\n      http: { method: GET, path: "${path}" }\n      expect: { status: 200 }\n`;
