// The whole system as separate local processes: what `make run` starts, and what the end-to-end
// tests start (on free ports). One place knows the services, their order and their wiring.
import { randomBytes } from "node:crypto";
import {
  findFreePort,
  runServiceCommand,
  type ServiceProcess,
  startServiceProcess,
} from "@testrun/kit/testing";
import { demoCredentials } from "./demo/seed.js";

/** The services, in start order, and whether they own a database schema. */
export const systemServices = [
  { name: "keys", port: 7101, database: true },
  { name: "catalog", port: 7102, database: true },
  { name: "billing", port: 7103, database: true },
  { name: "runs", port: 7104, database: true },
  { name: "executor", port: 7105, database: false },
  { name: "gateway", port: 7100, database: false },
] as const;

export type SystemServiceName = (typeof systemServices)[number]["name"];

export interface SystemOptions {
  databaseUrl: string;
  redisUrl: string;
  /** Fixed ports (`make run`) or free ones (tests). */
  ports: "fixed" | "free";
  httpPort?: number;
  demoTargetPort?: number;
  /** Extra environment for every service (short leases in tests, say). */
  extraEnv?: Record<string, string>;
  /** Extra environment for one service only (an executor's concurrency, say); wins over extraEnv. */
  serviceEnv?: Partial<Record<SystemServiceName, Record<string, string>>>;
  onLine?: (line: string) => void;
  keepOutput?: boolean;
}

export interface System {
  /** What every service but the executor gets (the CLI's environment too). */
  env: Record<string, string>;
  /** What the executor gets: no SERVICE_TOKEN, as in the chart (it holds only EXECUTOR_TOKEN). */
  executorEnv: Record<string, string>;
  gatewayUrl: string;
  demoTargetUrl: string;
  processes: Map<string, ServiceProcess>;
  /** Stops every process with SIGTERM, the gateway first; resolves with their exit codes. */
  stop(): Promise<(number | null)[]>;
}

const randomToken = () => randomBytes(32).toString("base64url");

export async function startSystem(options: SystemOptions): Promise<System> {
  const portOf = async (fixed: number) => (options.ports === "fixed" ? fixed : await findFreePort());
  const ports = new Map<string, number>();
  for (const service of systemServices) ports.set(service.name, await portOf(service.port));
  const httpPort = options.httpPort ?? (await portOf(8080));
  const demoTargetPort = options.demoTargetPort ?? (await portOf(8090));

  // Tokens live as long as this system: every process gets them, nothing stores them.
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    SERVICE_TOKEN: process.env.SERVICE_TOKEN ?? randomToken(),
    EXECUTOR_TOKEN: process.env.EXECUTOR_TOKEN ?? randomToken(),
    // A fresh key suits throwaway databases; with your own DATABASE_URL set VARIABLES_KEY too, or
    // variable values stored by an earlier run cannot be read.
    VARIABLES_KEY: process.env.VARIABLES_KEY ?? randomBytes(32).toString("base64"),
    HTTP_PORT: String(httpPort),
    ...Object.fromEntries(
      [...ports].map(([name, port]) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${port}`]),
    ),
    ...options.extraEnv,
  };
  // Executors hold only their own token, as in the chart: the system is tested as deployed.
  const { SERVICE_TOKEN: _notForExecutors, ...executorEnv } = env;
  const output = {
    keepOutput: options.keepOutput ?? true,
    ...(options.onLine && { onLine: options.onLine }),
  };

  for (const service of systemServices.filter((s) => s.database)) {
    await runServiceCommand(service.name, ["migrate"], env);
  }
  const processes = new Map<string, ServiceProcess>();
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
        },
        { ...output, entry: "services/executor/src/demo-target/main.ts" },
      ),
    );
    for (const service of systemServices) {
      const port = String(ports.get(service.name));
      const base = service.name === "executor" ? executorEnv : env;
      const own = options.serviceEnv?.[service.name];
      processes.set(
        service.name,
        await startServiceProcess(service.name, { ...base, ...own, PORT: port }, output),
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
    demoTargetUrl: `http://127.0.0.1:${demoTargetPort}`,
    processes,
    stop,
  };
}
