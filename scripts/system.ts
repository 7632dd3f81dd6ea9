// The whole system as separate local processes: what `make run` starts, and what the end-to-end
// tests start (on free ports). The services and their order come from the registry
// (helm/testrun/services.yaml, scripts/services.ts); this file knows how they are wired locally.
import { randomBytes } from "node:crypto";
import {
  componentRedisUrl,
  createRedisUsers,
  findFreePort,
  type LaunchCommand,
  runServiceCommand,
  type ServiceProcess,
  startServiceProcess,
} from "@testrun/testing";
import { demoCredentials } from "./demo/seed.js";
import { redisUsers, services } from "./services.js";

/** The services, in start order (helm/testrun/services.yaml), and whether they own a database schema. */
export const systemServices = services.map((service) => ({
  name: service.name,
  port: service.port,
  metricsPort: service.metricsPort,
  httpPort: service.httpPort,
  database: service.migrates,
  redis: service.redis !== undefined,
  secrets: service.secrets,
}));

export type SystemServiceName = string;

export interface SystemOptions {
  databaseUrl: string;
  /**
   * An administrator's URL (allowed ACL SETUSER): each service connects with a Redis user of its
   * own made through it, with the rights the chart gives it (services/testing/src/redis-users.ts).
   */
  redisUrl: string;
  /** Fixed ports (`make run`) or free ones (tests). */
  ports: "fixed" | "free";
  httpPort?: number;
  /** The console's HTTP port (browsers): 3000 when fixed. */
  consoleHttpPort?: number;
  demoTargetPort?: number;
  /** Extra environment for every service (short leases in tests, say). */
  extraEnv?: Record<string, string>;
  /** Extra environment for one service only (an executor's concurrency, say); wins over extraEnv. */
  serviceEnv?: Partial<Record<SystemServiceName, Record<string, string>>>;
  /** Every line a service writes (its JSON log lines, anything on stderr), with the service's name. */
  onLine?: (line: string, service: string) => void;
  keepOutput?: boolean;
  /**
   * What this system is, in the report a service's unexpected exit writes to stderr (its name, exit
   * code or signal, last lines: startServiceProcess); `reportExits: false` leaves the report out.
   */
  owner?: string;
  reportExits?: boolean;
  /**
   * How to run a service other than from source through tsx: `make bench` runs the built copy as
   * the image does (services/kit/dist/launch.js). The process then gets only its environment.
   */
  launch?: (service: SystemServiceName) => LaunchCommand;
  /** Whether `databaseUrl` has every service's migrations already (tests copy a migrated template). */
  migrated?: boolean;
}

export interface System {
  /** What every service but the executor gets, but for REDIS_URL (the CLI's environment too). */
  env: Record<string, string>;
  /**
   * What the executor gets: no SERVICE_TOKEN, as in the chart (it holds only EXECUTOR_TOKEN), and
   * REDIS_URL with its own Redis user.
   */
  executorEnv: Record<string, string>;
  gatewayUrl: string;
  /** Where browsers open the console: its APP_URL, which run urls start with. */
  consoleUrl: string;
  demoTargetUrl: string;
  processes: Map<string, ServiceProcess>;
  /**
   * The environment each service was started with (its ports, Redis user and secrets included),
   * by name: another replica of it, started with this, joins the same system.
   */
  serviceEnvs: Map<string, Record<string, string>>;
  /** Where each service serves GET /metrics (its METRICS_PORT), by name. */
  metricsUrls: Map<string, string>;
  /** Stops every process with SIGTERM, the gateway first; resolves with their exit codes. */
  stop(): Promise<(number | null)[]>;
}

const randomToken = () => randomBytes(32).toString("base64url");

/**
 * Local targets (the demo target, the tests' own servers) listen on loopback, which executors
 * refuse by default (docs/runs.md, "Egress"): every executor started here is allowed it. The one
 * place that says so; tests of the refusal start an executor with EGRESS_ALLOW_CIDRS overridden.
 */
export const localTargetsEgress = { EGRESS_ALLOW_CIDRS: "127.0.0.0/8,::1/128" };

export async function startSystem(options: SystemOptions): Promise<System> {
  const portOf = async (fixed: number) => (options.ports === "fixed" ? fixed : await findFreePort());
  const ports = new Map<string, number>();
  for (const service of systemServices) ports.set(service.name, await portOf(service.port));
  const metricsPorts = new Map<string, number>();
  for (const service of systemServices) metricsPorts.set(service.name, await portOf(service.metricsPort));
  // HTTP ports: the registry's when fixed (the gateway's and the console's may be chosen).
  const chosenHttpPorts: Record<string, number | undefined> = {
    gateway: options.httpPort,
    console: options.consoleHttpPort,
  };
  const httpPorts = new Map<string, number>();
  for (const service of systemServices) {
    if (service.httpPort === undefined) continue;
    httpPorts.set(service.name, chosenHttpPorts[service.name] ?? (await portOf(service.httpPort)));
  }
  const httpPort = Number(httpPorts.get("gateway"));
  const consoleHttpPort = Number(httpPorts.get("console"));
  // localhost, not 127.0.0.1: what a person types, and the origin the console's cookies belong to.
  const appUrl = `http://localhost:${consoleHttpPort}`;
  const demoTargetPort = options.demoTargetPort ?? (await portOf(8090));

  // Tokens live as long as this system: every process gets them, nothing stores them.
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    SERVICE_TOKEN: process.env.SERVICE_TOKEN ?? randomToken(),
    EXECUTOR_TOKEN: process.env.EXECUTOR_TOKEN ?? randomToken(),
    // A fresh key suits throwaway databases; with your own DATABASE_URL set VARIABLES_KEY too, or
    // variable values stored by an earlier run cannot be read.
    VARIABLES_KEY: process.env.VARIABLES_KEY ?? randomBytes(32).toString("base64"),
    // The same for webhook secrets (docs/automation.md).
    WEBHOOK_SECRETS_KEY: process.env.WEBHOOK_SECRETS_KEY ?? randomBytes(32).toString("base64"),
    HTTP_PORT: String(httpPort),
    // The runs service's run urls and the console's own origin; the console's curl examples.
    APP_URL: appUrl,
    API_URL: `http://localhost:${httpPort}`,
    ...Object.fromEntries(
      [...ports].map(([name, port]) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${port}`]),
    ),
    ...options.extraEnv,
  };
  // As in the chart, the key-cache secret is for the services that declare it (keys, gateway) only,
  // and each service that uses Redis connects as its own user, with the chart's rules.
  const keyCacheSecret = process.env.KEY_CACHE_SECRET ?? randomToken();
  await createRedisUsers(options.redisUrl, redisUsers);
  const ownEnv = (name: string): Record<string, string> => {
    const service = systemServices.find((candidate) => candidate.name === name);
    return {
      ...(service?.secrets.includes("KEY_CACHE_SECRET") && { KEY_CACHE_SECRET: keyCacheSecret }),
      ...(service?.redis && { REDIS_URL: componentRedisUrl(options.redisUrl, name) }),
    };
  };
  // Executors hold only their own token, as in the chart: the system is tested as deployed.
  const { SERVICE_TOKEN: _notForExecutors, ...executorBase } = env;
  // Specs run in the user-code sandbox, which needs root; a developer's `make run` as another user
  // runs them unsandboxed instead, the system being that developer's alone
  // (services/executor/src/config.ts, PLAYWRIGHT_SPECS).
  const executorEnv = {
    ...localTargetsEgress,
    ...(process.getuid?.() !== 0 && { PLAYWRIGHT_SPECS: "unsandboxed" }),
    ...executorBase,
    ...ownEnv("executor"),
  };
  const { onLine } = options;
  const output = (service: string) => ({
    keepOutput: options.keepOutput ?? true,
    ...(onLine && { onLine: (line: string) => onLine(line, service) }),
    ...(options.owner !== undefined && { owner: options.owner }),
    ...(options.reportExits !== undefined && { reportExit: options.reportExits }),
  });

  for (const service of systemServices.filter((s) => s.database && !options.migrated)) {
    await runServiceCommand(service.name, ["migrate"], { ...env, ...ownEnv(service.name) });
  }
  const processes = new Map<string, ServiceProcess>();
  const serviceEnvs = new Map<string, Record<string, string>>();
  const stop = async () => {
    const order = [...processes.values()].reverse();
    const codes: (number | null)[] = [];
    for (const child of order) codes.push(await child.stop("SIGTERM"));
    return codes;
  };
  try {
    processes.set(
      "demo-target",
      await startServiceProcess(
        "demo-target",
        {
          PORT: String(demoTargetPort),
          DEMO_USER: demoCredentials.user,
          DEMO_PASSWORD: demoCredentials.password,
          DEMO_EMAIL: demoCredentials.email,
        },
        { ...output("demo-target"), entry: "services/executor/src/demo-target/main.ts" },
      ),
    );
    for (const service of systemServices) {
      const port = String(ports.get(service.name));
      // Webhooks of the local system may go to local receivers, over plain http (not for production).
      const base =
        service.name === "executor"
          ? executorEnv
          : service.name === "automation"
            ? { ...env, ...localTargetsEgress, WEBHOOK_ALLOW_HTTP: "true" }
            : env;
      const ownHttpPort = httpPorts.get(service.name);
      const own = {
        ...ownEnv(service.name),
        ...(ownHttpPort !== undefined && { HTTP_PORT: String(ownHttpPort) }),
        METRICS_PORT: String(metricsPorts.get(service.name)),
        ...options.serviceEnv?.[service.name],
      };
      const launch = options.launch?.(service.name);
      serviceEnvs.set(service.name, { ...base, ...own, PORT: port });
      processes.set(
        service.name,
        await startServiceProcess(
          service.name,
          { ...base, ...own, PORT: port },
          { ...output(service.name), ...(launch && { launch }) },
        ),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    env,
    executorEnv,
    gatewayUrl: `http://127.0.0.1:${httpPort}`,
    consoleUrl: appUrl,
    demoTargetUrl: `http://127.0.0.1:${demoTargetPort}`,
    processes,
    serviceEnvs,
    metricsUrls: new Map([...metricsPorts].map(([name, port]) => [name, `http://127.0.0.1:${port}/metrics`])),
    stop,
  };
}
