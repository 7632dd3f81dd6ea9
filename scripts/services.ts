// The registry of services (helm/testrun/services.yaml), read and checked: what scripts/system.ts
// starts and what the tests hold the chart, the image and the docs to. The file lives in the chart
// because a chart can only read files inside its own folder.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { redisUserOf } from "@testrun/testing";
import { parse } from "yaml";

export interface ServiceEntry {
  /** The folder under services/ and the container's `args`. */
  name: string;
  /** PORT: gRPC. */
  port: number;
  /** METRICS_PORT: GET /metrics for Prometheus (HTTP/1.1); the default in src/config.ts. */
  metricsPort: number;
  /** HTTP_PORT, when the service also serves HTTP (/healthz, /readyz). */
  httpPort?: number;
  /** Path prefixes the public host (Ingress / HTTPRoute) sends to its httpPort. */
  paths: string[];
  /** The services whose <NAME>_URL its config reads. */
  calls: string[];
  /** Its config's variables that come from the Secret. */
  secrets: string[];
  /** Secret variables it gets only when a feature is configured. */
  optionalSecrets: string[];
  /**
   * The variables of its config the chart sets from its values, beyond those every component gets
   * (the chart's testrun.settings says from where, and leaves one unset while its feature is off).
   */
  env: string[];
  /** Whether it owns a database schema and runs `<name> migrate`. */
  migrates: boolean;
  headless: boolean;
  podNameVariable?: string;
  /** The gRPC health name its readiness probe asks for, when not the process's own (""). */
  readiness?: string;
  /** The ACL rules of its own Redis user (after the registry's redisCommon), when it uses Redis. */
  redis?: string;
}

/** A service's Redis user: its name and every rule it gets (redisCommon, then its own). */
export interface RedisUserEntry {
  component: string;
  user: string;
  rules: string[];
}

export const registryPath = fileURLToPath(new URL("../helm/testrun/services.yaml", import.meta.url));

const known = new Set([
  "name",
  "port",
  "httpPort",
  "metricsPort",
  "paths",
  "calls",
  "secrets",
  "optionalSecrets",
  "env",
  "migrates",
  "headless",
  "podNameVariable",
  "readiness",
  "redis",
]);

/** ACL rules: keys (~, %R~, %W~), channels (&) and commands (+, -); nothing that sets a password. */
const aclRule = /^(?:%[RW]{1,2}~|~|&|[+-])[^\s>#<!]+$/;
/** Rules that would give a component everything a key, channel or command class holds. */
const tooWide = /^(?:\+@(?:all|admin|dangerous)|(?:%[RW]{1,2})?~\*|&\*)$/;

const rulesOf = (text: string): string[] => text.trim().split(/\s+/).filter(Boolean);

/** Parses the registry, refusing anything malformed with a message naming the entry. */
export function parseRegistry(text: string): ServiceEntry[] {
  return parseRegistryDocument(text).services;
}

function checkRules(where: string, text: unknown): string {
  if (typeof text !== "string" || rulesOf(text).length === 0)
    throw new Error(`${where}: a string of Redis ACL rules`);
  const bad = rulesOf(text).filter((rule) => !aclRule.test(rule) || tooWide.test(rule));
  if (bad.length > 0)
    throw new Error(
      `${where}: not a rule a service may have: ${bad.join(" ")} (keys ~, channels &, commands +/-)`,
    );
  return text;
}

/** The whole registry: the services, and the Redis rules every service's user starts from. */
export function parseRegistryDocument(text: string): { services: ServiceEntry[]; redisCommon: string[] } {
  const document = parse(text) as { services?: unknown; redisCommon?: unknown };
  const redisCommon =
    document?.redisCommon === undefined
      ? []
      : rulesOf(checkRules(`${registryPath}: redisCommon`, document.redisCommon));
  if (!Array.isArray(document?.services)) throw new Error(`${registryPath}: no "services" list`);
  const entries = document.services.map((raw: Record<string, unknown>, index: number): ServiceEntry => {
    const where = `${registryPath}: services[${index}]${typeof raw?.name === "string" ? ` (${raw.name})` : ""}`;
    const fail = (problem: string): never => {
      throw new Error(`${where}: ${problem}`);
    };
    if (typeof raw !== "object" || raw === null) fail("not a map");
    for (const key of Object.keys(raw)) if (!known.has(key)) fail(`unknown key "${key}"`);
    const name = typeof raw.name === "string" && /^[a-z]+$/.test(raw.name) ? raw.name : fail("name: [a-z]+");
    const port = (value: unknown, key: string) =>
      Number.isInteger(value) && (value as number) > 0 && (value as number) < 65536
        ? (value as number)
        : fail(`${key}: a port number`);
    const list = (value: unknown, key: string) =>
      value === undefined
        ? []
        : Array.isArray(value) && value.every((item) => typeof item === "string")
          ? (value as string[])
          : fail(`${key}: a list of names`);
    if (typeof raw.migrates !== "boolean") fail("migrates: true or false");
    return {
      name,
      port: port(raw.port, "port"),
      metricsPort: port(raw.metricsPort, "metricsPort"),
      ...(raw.httpPort !== undefined && { httpPort: port(raw.httpPort, "httpPort") }),
      paths: list(raw.paths, "paths"),
      calls: list(raw.calls, "calls"),
      secrets: list(raw.secrets, "secrets"),
      optionalSecrets: list(raw.optionalSecrets, "optionalSecrets"),
      env: list(raw.env, "env").map((variable) =>
        /^[A-Z][A-Z0-9_]*$/.test(variable) ? variable : fail(`env: ${variable} is not a variable name`),
      ),
      migrates: raw.migrates as boolean,
      headless: raw.headless === true,
      ...(typeof raw.podNameVariable === "string" && { podNameVariable: raw.podNameVariable }),
      ...(raw.readiness !== undefined && {
        readiness:
          typeof raw.readiness === "string" && /^[a-z][a-z0-9.]*$/.test(raw.readiness)
            ? raw.readiness
            : fail("readiness: a gRPC health name (a.b.c)"),
      }),
      ...(raw.redis !== undefined && { redis: checkRules(`${where}: redis`, raw.redis) }),
    };
  });
  const names = entries.map((entry) => entry.name);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate) throw new Error(`${registryPath}: "${duplicate}" is listed twice`);
  const ports = entries.flatMap((entry) => [
    entry.port,
    entry.metricsPort,
    ...(entry.httpPort ? [entry.httpPort] : []),
  ]);
  const clash = ports.find((port, index) => ports.indexOf(port) !== index);
  if (clash) throw new Error(`${registryPath}: port ${clash} is used twice`);
  for (const entry of entries) {
    if (entry.paths.length > 0 && entry.httpPort === undefined)
      throw new Error(`${registryPath}: ${entry.name} has paths but no httpPort`);
    const unknown = entry.calls.filter((callee) => !names.includes(callee));
    if (unknown.length > 0)
      throw new Error(`${registryPath}: ${entry.name} calls unknown ${unknown.join(", ")}`);
    if ((entry.redis !== undefined) !== entry.secrets.includes("REDIS_URL"))
      throw new Error(
        `${registryPath}: ${entry.name} needs redis rules exactly when its secrets hold REDIS_URL`,
      );
  }
  return { services: entries, redisCommon };
}

const registry = parseRegistryDocument(readFileSync(registryPath, "utf8"));

/** Every service, in start order. */
export const services: readonly ServiceEntry[] = registry.services;

/**
 * The Redis user of every service that uses Redis, as the chart's Redis defines them and as
 * `make run` and the tests create them (ACL SETUSER): the one list of who may do what in Redis.
 */
export const redisUsers: readonly RedisUserEntry[] = services.flatMap((service) =>
  service.redis === undefined
    ? []
    : [
        {
          component: service.name,
          user: redisUserOf(service.name),
          rules: [...registry.redisCommon, ...rulesOf(service.redis)],
        },
      ],
);

export const serviceNames = services.map((service) => service.name);

export function serviceEntry(name: string): ServiceEntry {
  const entry = services.find((service) => service.name === name);
  if (!entry) throw new Error(`no service "${name}" in ${registryPath}`);
  return entry;
}
