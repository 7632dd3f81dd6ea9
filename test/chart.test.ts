// The Helm chart (helm/testrun) against the code it deploys: what the services' config schemas require,
// the ports they listen on, who calls whom, which services own a database schema. The services come
// from the registry (helm/testrun/services.yaml, which the chart reads too), the facts from the code
// (services/<name>/src/config.ts, services/<name>/src/db), so a new variable, service or call that the
// chart does not follow makes these tests fail.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import type { IHTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute";
import { repoRoot } from "@testrun/testing";
import { expect } from "chai";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import type { IIngress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import type { IPodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import type { IRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IProbe } from "kubernetes-models/v1/Probe";
import type { ISecret } from "kubernetes-models/v1/Secret";
import type { IService } from "kubernetes-models/v1/Service";
import type { IServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { parse } from "yaml";
import { services as registry } from "../scripts/services.js";
import {
  clusterRangesValues,
  helm,
  kubeVersionArgs,
  renderChart,
  tryRenderChart,
  valuesArgs,
} from "./helm.js";
import {
  type ContainerEnv,
  hookEvents,
  hookWeight,
  type K8sObject,
  type LabelSelector,
  RenderedChart,
  resolvePort,
  selectorMatches,
  validateObject,
  type Workload,
} from "./kubernetes.js";

/** TESTRUN_CHART points these tests at another copy of the chart (a modified one, say). */
const chartPath = process.env.TESTRUN_CHART ?? `${repoRoot}helm/testrun`;
const release = "ci";
const namespace = "testrun-ci";

/** values.yaml (the evaluation default) and every example kept in the chart. */
const valueFiles = [
  "values.yaml",
  ...(existsSync(`${chartPath}/examples`) ? readdirSync(`${chartPath}/examples`) : [])
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .map((file) => `examples/${file}`),
];

interface SettingSchema {
  safeParse(value: unknown): { success: boolean; data?: unknown };
}
interface ConfigSchema {
  shape: Record<string, SettingSchema>;
  safeParse(env: unknown): {
    success: boolean;
    error?: { issues: { path: PropertyKey[]; message: string }[] };
  };
}

/** The deployed components: every service of the registry. */
const components = registry.map((service) => service.name);
/** What the public host (Ingress, HTTPRoute) routes: each path prefix to its component's HTTP port. */
const publicPaths = registry.flatMap((service) =>
  service.paths.map((path) => ({ path, service: service.name })),
);
const configSchemas = new Map<string, ConfigSchema>();
for (const name of components) {
  const module = (await import(`${repoRoot}services/${name}/src/config.ts`)) as {
    configSchema: ConfigSchema;
  };
  configSchemas.set(name, module.configSchema);
}
const schemaOf = (service: string) => {
  const schema = configSchemas.get(service);
  if (!schema) throw new Error(`${service} is not a deployed component`);
  return schema;
};

/** Services that own a database schema: those with a src/db folder. */
const schemaOwners = readdirSync(`${repoRoot}services`)
  .filter((name) => existsSync(`${repoRoot}services/${name}/src/db`))
  .sort();

/** Variables without a default: the chart must set them. */
const requiredVariables = (schema: ConfigSchema) =>
  Object.entries(schema.shape)
    .filter(([, setting]) => !setting.safeParse(undefined).success)
    .map(([variable]) => variable);

/** A setting as the service reads it: the environment's value, else the schema's default. */
function setting(schema: ConfigSchema, env: Record<string, string>, variable: string): unknown {
  const parsed = schema.shape[variable]?.safeParse(env[variable]);
  return parsed?.success ? parsed.data : undefined;
}

/** `<NAME>_URL` variables whose NAME is a component: the addresses of the services it calls. */
const serviceUrlVariables = (schema: ConfigSchema) =>
  Object.keys(schema.shape)
    .map((variable) => ({ variable, target: /^([A-Z]+)_URL$/.exec(variable)?.[1]?.toLowerCase() }))
    .filter((entry): entry is { variable: string; target: string } =>
      components.includes(entry.target ?? ""),
    );

/** Who calls whom, from the config schemas. */
const callersOf = (target: string) =>
  components
    .filter((caller) => serviceUrlVariables(schemaOf(caller)).some((url) => url.target === target))
    .sort();

/** Stand-ins for secrets the chart does not render (an existingSecret), valid for the config schemas. */
const secretPlaceholders: Record<string, string> = {
  DATABASE_URL: "postgres://testrun:placeholder@postgres.example:5432/testrun",
  REDIS_URL: "redis://redis.example:6379",
  VARIABLES_KEY: Buffer.alloc(32, 7).toString("base64"),
  WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 9).toString("base64"),
};
const secretPlaceholder = (variable: string) =>
  secretPlaceholders[variable] ?? "placeholder-token-".padEnd(48, "x");
const fieldPlaceholder = (fieldPath: string) => `from-${fieldPath.replace(/[^a-z0-9]+/gi, "-")}`;

/** A container that runs a service: a component's main container or a migration container. */
interface ServiceContainer {
  /** What assertion messages call it. */
  label: string;
  service: string;
  workload: Workload;
  container: IContainer;
  env: ContainerEnv;
}

const isMigration = (container: IContainer) => container.args?.[1] === "migrate";

function componentContainer(chart: RenderedChart, name: string): ServiceContainer {
  const { workload, container } = chart.component(name);
  const env = chart.containerEnv(container, secretPlaceholder, fieldPlaceholder);
  return { label: name, service: name, workload, container, env };
}

/** The main container of each of a component's Deployments (executor pools are several). */
function componentContainers(chart: RenderedChart, name: string): ServiceContainer[] {
  const deployments = chart.deployments(name);
  return deployments.map(({ workload, container }) => ({
    label: deployments.length > 1 ? workload.object.metadata.name : name,
    service: name,
    workload,
    container,
    env: chart.containerEnv(container, secretPlaceholder, fieldPlaceholder),
  }));
}

/** Every Deployment of every component, with its main container. */
const everyDeployment = (chart: RenderedChart) =>
  components.flatMap((name) => componentContainers(chart, name));

function migrationContainers(chart: RenderedChart): ServiceContainer[] {
  return chart.workloads().flatMap((workload) =>
    [...(workload.spec.initContainers ?? []), ...workload.spec.containers]
      .filter(isMigration)
      .map((container) => ({
        label: `${workload.identity} ${container.name}`,
        service: container.args?.[0] ?? "",
        workload,
        container,
        env: chart.containerEnv(container, secretPlaceholder, fieldPlaceholder),
      })),
  );
}

const serviceContainers = (chart: RenderedChart) => [
  ...everyDeployment(chart),
  ...migrationContainers(chart),
];

/** The Services in front of a component's pods, and only its pods. */
const servicesOf = (chart: RenderedChart, name: string) =>
  chart.ofKind<IService>("Service").filter((service) => {
    const behind = chart.workloadsBehind(service);
    return behind.length > 0 && behind.every((workload) => workload.identity === name);
  });

/** The container port a Service port sends to, in a workload. */
function targetPort(service: IService, servicePort: number, workload: Workload): number | undefined {
  const port = service.spec?.ports?.find((candidate) => candidate.port === servicePort);
  if (!port) return undefined;
  const target = port.targetPort ?? port.port;
  if (typeof target === "number") return target;
  for (const container of workload.spec.containers) {
    const resolved = resolvePort(container, target);
    if (resolved !== undefined) return resolved;
  }
  return undefined;
}

const defaultPorts: Record<string, number> = { "http:": 80, "https:": 443, "redis:": 6379, "rediss:": 6379 };
const urlPort = (url: URL) =>
  url.port
    ? Number(url.port)
    : (defaultPorts[url.protocol] ?? (url.protocol.startsWith("postgres") ? 5432 : 0));

const isOutside = (source: string) =>
  source.startsWith("anywhere") || source.startsWith("outside") || source.startsWith("every pod");

const probePort = (container: IContainer, probe: IProbe | undefined) =>
  probe?.grpc ? probe.grpc.port : resolvePort(container, probe?.httpGet?.port ?? probe?.tcpSocket?.port);

/** Replicas a component may run: its Deployment's, or its HPA's minimum when one scales it. */
function minReplicas(chart: RenderedChart, workload: Workload): number {
  const hpa = chart
    .ofKind<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler")
    .find((candidate) => candidate.spec?.scaleTargetRef.name === workload.object.metadata.name);
  if (hpa) return hpa.spec?.minReplicas ?? 1;
  return ((workload.object.spec as { replicas?: number }).replicas ?? 1) as number;
}

interface ValuesSchema {
  $defs: Record<string, { propertyNames?: { not?: { enum?: string[] } } }>;
}
const valuesSchema = JSON.parse(readFileSync(`${chartPath}/values.schema.json`, "utf8")) as ValuesSchema;
/** Names values.schema.json refuses in a `$defs` map (env, podLabels). */
const refusedNames = (definition: string) => valuesSchema.$defs[definition]?.propertyNames?.not?.enum ?? [];
/** What the chart sets that an `env` override may still change: the log level, V8's heap and telemetry. */
const overridable = (variable: string) =>
  variable === "LOG_LEVEL" || variable === "NODE_OPTIONS" || variable.startsWith("OTEL_");

/** Every variable a container gets, secrets included. */
const variablesOf = (env: ContainerEnv) => [
  ...new Set([...Object.keys(env.values), ...env.secretRefs.map((ref) => ref.variable)]),
];

interface ValueFile {
  config?: { env?: Record<string, unknown> };
  components?: Record<
    string,
    { env?: Record<string, unknown>; pools?: Record<string, { env?: Record<string, unknown> }> }
  >;
}

describe("helm chart helm/testrun", () => {
  it("keeps the default, production and minimal value files", () => {
    expect(valueFiles).to.include.members([
      "values.yaml",
      "examples/production.yaml",
      "examples/minimal.yaml",
    ]);
  });

  for (const valueFile of valueFiles) {
    describe(`with ${valueFile}`, () => {
      let chart: RenderedChart;

      before(async () => {
        chart = new RenderedChart(
          await renderChart(chartPath, { release, namespace, valueFiles: [valueFile] }),
          namespace,
        );
      });

      it("passes helm lint --strict", async () => {
        const result = await helm([
          "lint",
          "--strict",
          chartPath,
          ...kubeVersionArgs(chartPath),
          ...valuesArgs(chartPath, [valueFile]),
        ]);
        expect(result.code, `${result.stdout}\n${result.stderr}`).to.equal(0);
      });

      it("renders objects that all validate against the Kubernetes JSON schemas", async () => {
        expect(chart.objects).to.not.be.empty;
        const errors: string[] = [];
        for (const object of chart.objects) {
          await validateObject(object).catch((error: Error) => errors.push(error.message));
        }
        expect(errors.join("\n"), "schema errors").to.equal("");
      });

      it("sets every variable each service's config requires, and the config parses", () => {
        for (const { label, service, env } of serviceContainers(chart)) {
          const schema = schemaOf(service);
          expect(env.problems, label).to.deep.equal([]);
          const missing = requiredVariables(schema).filter((variable) => !(variable in env.values));
          expect(missing, `${label}: required variables the chart does not set`).to.deep.equal([]);
          const parsed = schema.safeParse(env.values);
          const issues = (parsed.error?.issues ?? []).map(
            (issue) => `${issue.path.join(".")}: ${issue.message}`,
          );
          expect(issues.join("; "), `${label}: its config rejects the rendered environment`).to.equal("");
        }
      });

      it("gives each service only the secrets its config declares, and secrets only through Secrets", () => {
        const containers = serviceContainers(chart);
        const secretVariables = new Set(
          containers.flatMap(({ env }) => env.secretRefs.map((ref) => ref.variable)),
        );
        expect([...secretVariables], "variables taken from Secrets").to.include.members(["SERVICE_TOKEN"]);
        for (const { label, service, workload, container, env } of containers) {
          const declared = Object.keys(schemaOf(service).shape);
          for (const ref of env.secretRefs) {
            expect(declared, `${label} gets secret variable ${ref.variable}`).to.include(ref.variable);
            // But REDIS_URL: each component connects to Redis as its own user (REDIS_URL_<NAME>).
            const key = ref.variable === "REDIS_URL" ? `REDIS_URL_${service.toUpperCase()}` : ref.variable;
            expect(ref.key, `${label}: Secret keys are named like their variables`).to.equal(key);
          }
          expect(env.secretEnvFrom, `${label}: envFrom hands over a whole Secret`).to.deep.equal([]);
          const secretVolumes = (workload.spec.volumes ?? []).filter(
            (volume) => volume.secret || volume.projected?.sources?.some((source) => source.secret),
          );
          expect(
            secretVolumes.map((volume) => volume.name),
            `${label}: Secret volumes`,
          ).to.deep.equal([]);
          const plain = (container.env ?? [])
            .filter((variable) => !variable.valueFrom)
            .map((variable) => variable.name);
          const fromConfigMaps = Object.keys(env.values).filter(
            (variable) =>
              !plain.includes(variable) && !env.secretRefs.some((ref) => ref.variable === variable),
          );
          for (const variable of [...plain, ...fromConfigMaps]) {
            expect(
              secretVariables.has(variable),
              `${label}: secret ${variable} set outside a Secret`,
            ).to.equal(false);
          }
        }
      });

      it("exposes and probes the ports each service listens on", () => {
        for (const { service: name, container, env, workload } of everyDeployment(chart)) {
          const schema = schemaOf(name);
          const port = setting(schema, env.values, "PORT") as number;
          const http = "HTTP_PORT" in schema.shape;
          const httpPort = setting(schema, env.values, "HTTP_PORT") as number | undefined;
          const metricsPort = setting(schema, env.values, "METRICS_PORT") as number;
          expect(metricsPort, `${name} METRICS_PORT`).to.be.above(0);
          const expected = http ? [port, httpPort, metricsPort] : [port, metricsPort];
          const exposed = (container.ports ?? []).map((candidate) => candidate.containerPort);
          expect([...exposed].sort(), `${name} container ports`).to.deep.equal([...expected].sort());

          const probes = { liveness: container.livenessProbe, readiness: container.readinessProbe };
          expect(probes.liveness, `${name} livenessProbe`).to.not.equal(undefined);
          expect(probes.readiness, `${name} readinessProbe`).to.not.equal(undefined);
          if (http) {
            expect(probes.liveness?.httpGet?.path, `${name} liveness path`).to.equal("/healthz");
            expect(probes.readiness?.httpGet?.path, `${name} readiness path`).to.equal("/readyz");
            for (const probe of [probes.liveness, probes.readiness, container.startupProbe].filter(Boolean)) {
              expect(probePort(container, probe), `${name} HTTP probe port`).to.equal(httpPort);
            }
          } else {
            for (const probe of [probes.liveness, probes.readiness, container.startupProbe].filter(Boolean)) {
              expect(probe?.grpc, `${name}: a native gRPC probe`).to.not.equal(undefined);
              expect(probe?.grpc?.port, `${name} gRPC probe port`).to.equal(port);
            }
            // Alive and started: the process (""); ready: what the registry names, if anything
            // (an executor: while it takes some kind of test).
            for (const probe of [probes.liveness, container.startupProbe].filter(Boolean))
              expect(probe?.grpc?.service ?? "", `${name} gRPC probe service`).to.equal("");
            expect(probes.readiness?.grpc?.service ?? "", `${name} readiness service`).to.equal(
              registry.find((entry) => entry.name === name)?.readiness ?? "",
            );
          }

          const services = servicesOf(chart, name);
          expect(services, `${name}: a Service in front of its pods`).to.not.be.empty;
          const reachable = services.flatMap((service) =>
            (service.spec?.ports ?? []).map((servicePort) => targetPort(service, servicePort.port, workload)),
          );
          expect(reachable, `${name}: ports its Service sends to`).to.include.members(expected);
        }
      });

      it("runs every component and migration with resources and a locked-down security context", () => {
        const pods = [
          ...everyDeployment(chart).map((deployment) => deployment.workload),
          ...migrationContainers(chart).map((m) => m.workload),
        ];
        for (const workload of pods) {
          const pod = workload.spec;
          for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
            const label = `${workload.identity} container ${container.name}`;
            const security = container.securityContext ?? {};
            expect(
              security.runAsNonRoot ?? pod.securityContext?.runAsNonRoot,
              `${label} runAsNonRoot`,
            ).to.equal(true);
            expect(security.readOnlyRootFilesystem, `${label} readOnlyRootFilesystem`).to.equal(true);
            expect(security.allowPrivilegeEscalation, `${label} allowPrivilegeEscalation`).to.equal(false);
            expect(security.capabilities?.drop ?? [], `${label} capabilities.drop`).to.include("ALL");
            expect(security.capabilities?.add ?? [], `${label} capabilities.add`).to.deep.equal([]);
            // Every pod on RuntimeDefault, browser executors included: chromium's sandbox, whose
            // user namespaces need another profile, is turned on by the operator (browser.sandbox).
            expect(
              (security.seccompProfile ?? pod.securityContext?.seccompProfile)?.type,
              `${label} seccompProfile`,
            ).to.equal("RuntimeDefault");
            const resources = container.resources ?? {};
            expect(resources.requests ?? {}, `${label} resources.requests`).to.include.keys("cpu", "memory");
            expect(resources.limits ?? {}, `${label} resources.limits`).to.include.keys("memory");
            const tmp = container.volumeMounts?.find((mount) => mount.mountPath === "/tmp");
            const tmpVolume = pod.volumes?.find((volume) => volume.name === tmp?.name);
            expect(tmpVolume?.emptyDir, `${label}: /tmp is an emptyDir`).to.not.equal(undefined);
          }
        }
      });

      it("gives each component its own ServiceAccount without API access", () => {
        const accounts = components.map((name) => {
          // A component's Deployments (executor pools) share its account.
          const names = new Set(
            chart.deployments(name).map(({ workload }) => workload.spec.serviceAccountName),
          );
          expect(names.size, `${name}: one ServiceAccount for all its Deployments`).to.equal(1);
          const { workload } = chart.deployments(name)[0] as { workload: Workload };
          const accountName = workload.spec.serviceAccountName ?? "default";
          const account = chart.find<IServiceAccount>("ServiceAccount", accountName);
          expect(account, `${name}: ServiceAccount ${accountName} is rendered`).to.not.equal(undefined);
          const automount =
            workload.spec.automountServiceAccountToken ?? account?.automountServiceAccountToken;
          expect(automount, `${name}: automountServiceAccountToken`).to.equal(false);
          return accountName;
        });
        expect(new Set(accounts).size, "one ServiceAccount per component").to.equal(components.length);
        const bindings = [
          ...chart.ofKind<IRoleBinding>("RoleBinding"),
          ...chart.ofKind<IRoleBinding>("ClusterRoleBinding"),
        ];
        const bound = bindings.flatMap((binding) => (binding.subjects ?? []).map((subject) => subject.name));
        expect(
          bound.filter((subject) => accounts.includes(subject)),
          "components bound to roles",
        ).to.deep.equal([]);
      });

      it("gives each pod time to drain and finish in-flight work before it is killed", () => {
        for (const { service: name, workload, container, env } of everyDeployment(chart)) {
          const schema = schemaOf(name);
          const drainMs =
            "SHUTDOWN_DRAIN_MS" in schema.shape
              ? (setting(schema, env.values, "SHUTDOWN_DRAIN_MS") as number)
              : Number(env.values.SHUTDOWN_DRAIN_MS ?? 0);
          const timeoutMs = setting(schema, env.values, "SHUTDOWN_TIMEOUT_MS") as number;
          const preStopSeconds = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
          const grace = workload.spec.terminationGracePeriodSeconds ?? 30;
          // The contract: drain + in-flight timeout, plus 5 s for closing connections and exiting.
          const needed = preStopSeconds + (drainMs + timeoutMs) / 1000 + 5;
          expect(
            grace,
            `${name}: terminationGracePeriodSeconds (drain ${drainMs} ms, timeout ${timeoutMs} ms)`,
          ).to.be.at.least(needed);
        }
      });

      it("points every address in a config at a rendered Service of the right component and port", () => {
        for (const { label, service, workload: caller, env } of serviceContainers(chart)) {
          const schema = schemaOf(service);
          for (const { variable, target } of serviceUrlVariables(schema)) {
            const address = String(setting(schema, env.values, variable));
            const url = new URL(address);
            const found = chart.serviceForHost(url.hostname);
            expect(found, `${label} ${variable}=${address}: no rendered Service of that name`).to.not.equal(
              undefined,
            );
            if (!found) continue;
            const behind = chart.workloadsBehind(found);
            expect(
              behind.map((workload) => workload.identity),
              `${label} ${variable}: pods behind ${found.metadata.name}`,
            ).to.deep.equal([target]);
            const targetContainer = componentContainer(chart, target);
            const targetPortNumber = setting(schemaOf(target), targetContainer.env.values, "PORT") as number;
            expect(
              targetPort(found, urlPort(url), targetContainer.workload),
              `${label} ${variable}=${address}: Service port must lead to ${target}'s PORT`,
            ).to.equal(targetPortNumber);
            expect(
              chart.egressAllowed(caller, targetContainer.workload, targetPortNumber),
              `${label} may not connect to ${target} (egress)`,
            ).to.equal(true);
          }
          // Addresses of in-chart PostgreSQL and Redis (evaluation): they must lead somewhere and let the caller in.
          for (const variable of ["DATABASE_URL", "REDIS_URL"].filter(
            (v) => v in schema.shape && v in env.values,
          )) {
            const url = new URL(String(env.values[variable]));
            const found = chart.serviceForHost(url.hostname);
            if (!found) continue; // an external server
            const [backend] = chart.workloadsBehind(found);
            expect(
              backend,
              `${label} ${variable}: no pods behind Service ${found.metadata.name}`,
            ).to.not.equal(undefined);
            if (!backend) continue;
            const port = targetPort(found, urlPort(url), backend);
            expect(
              port,
              `${label} ${variable}: Service ${found.metadata.name} has no port ${urlPort(url)}`,
            ).to.not.equal(undefined);
            const sources = chart.ingressSources(backend, port ?? 0);
            const admitted = [...sources].some((source) => source === caller.identity || isOutside(source));
            expect(
              admitted,
              `${label} is not let in to ${backend.identity} (${[...sources].join(", ")})`,
            ).to.equal(true);
            expect(
              chart.egressAllowed(caller, backend, port ?? 0),
              `${label} may not connect to ${backend.identity}`,
            ).to.equal(true);
          }
        }
      });

      it("admits traffic from outside only to the gateway, and to each service only from its callers", () => {
        for (const { service: name, workload, container, env } of everyDeployment(chart)) {
          const schema = schemaOf(name);
          const httpPort =
            "HTTP_PORT" in schema.shape ? (setting(schema, env.values, "HTTP_PORT") as number) : 0;
          if (httpPort) {
            const sources = chart.ingressSources(workload, httpPort);
            expect([...sources].some(isOutside), `${name} HTTP port admits outside traffic`).to.equal(true);
          }
          const port = setting(schema, env.values, "PORT") as number;
          const admitted = [...chart.ingressSources(workload, port)].sort().join(", ");
          expect(admitted, `${name} admits on port ${port}; its callers are`).to.equal(
            callersOf(name).join(", "),
          );
          for (const other of (container.ports ?? []).filter(
            (p) => p.containerPort !== port && p.containerPort !== httpPort,
          )) {
            const sources = [...chart.ingressSources(workload, other.containerPort)];
            expect(
              sources.filter(isOutside),
              `${name} port ${other.containerPort} admits outside traffic`,
            ).to.deep.equal([]);
          }
        }
      });

      it("migrates every service with a schema in a pre-install,pre-upgrade Job hook on the same image", () => {
        const migrations = migrationContainers(chart);
        expect(migrations, "migration containers").to.not.be.empty;
        for (const { label, workload, container } of migrations) {
          expect(workload.object.kind, label).to.equal("Job");
          expect([...hookEvents(workload.object)].sort(), `${label} helm.sh/hook`).to.deep.equal([
            "pre-install",
            "pre-upgrade",
          ]);
          expect(container.args, label).to.have.lengthOf(2);
          expect(container.image, `${label} image`).to.equal(
            componentContainer(chart, "gateway").container.image,
          );
        }
        const migrated = [...new Set(migrations.map((migration) => migration.service))].sort();
        expect(migrated, "services migrated").to.deep.equal(schemaOwners);
        for (const { service: name, container } of everyDeployment(chart))
          expect(container.args, `${name} serves`).to.deep.equal([name]);
      });

      it("creates what the migration hook needs before it runs", () => {
        for (const { label, workload, container, env } of migrationContainers(chart)) {
          const job = workload.object;
          const needed: K8sObject[] = [];
          const account = chart.find("ServiceAccount", workload.spec.serviceAccountName ?? "");
          if (account) needed.push(account);
          for (const ref of env.secretRefs) {
            const secret = chart.find("Secret", ref.secret);
            if (secret) needed.push(secret);
          }
          const configMapNames = [
            ...(container.envFrom ?? []).map((source) => source.configMapRef?.name),
            ...(container.env ?? []).map((variable) => variable.valueFrom?.configMapKeyRef?.name),
          ];
          for (const name of configMapNames) {
            const configMap = name ? chart.find("ConfigMap", name) : undefined;
            if (configMap) needed.push(configMap);
          }
          const database = chart.serviceForHost(new URL(String(env.values.DATABASE_URL)).hostname);
          if (database)
            needed.push(database, ...chart.workloadsBehind(database).map((backend) => backend.object));
          for (const object of new Set(needed)) {
            const events = hookEvents(object);
            const before = events.includes("pre-install") && hookWeight(object) < hookWeight(job);
            expect(
              before,
              `${label} needs ${object.kind} ${object.metadata.name}, which is not created before the pre-install hook runs`,
            ).to.equal(true);
          }
        }
      });

      it("keeps a PodDisruptionBudget for every component that runs more than one replica", () => {
        const budgets = chart.ofKind<IPodDisruptionBudget>("PodDisruptionBudget");
        for (const { label: name, workload } of everyDeployment(chart)) {
          const covered = budgets.filter((budget) =>
            selectorMatches(budget.spec?.selector ?? {}, workload.labels),
          );
          if (minReplicas(chart, workload) > 1)
            expect(covered, `${name}: PodDisruptionBudget`).to.have.lengthOf(1);
        }
      });

      it("spreads each component's pods across nodes, and leaves replicas to the autoscaler when there is one", () => {
        for (const { label: name, workload } of everyDeployment(chart)) {
          const constraints = workload.spec.topologySpreadConstraints ?? [];
          expect(
            constraints.some(
              (constraint) =>
                constraint.labelSelector !== undefined &&
                selectorMatches(constraint.labelSelector, workload.labels),
            ),
            `${name}: topologySpreadConstraints selecting its pods`,
          ).to.equal(true);
          const scaled = chart
            .ofKind<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler")
            .some((hpa) => hpa.spec?.scaleTargetRef.name === workload.object.metadata.name);
          if (scaled) {
            expect(
              (workload.object.spec as { replicas?: number }).replicas,
              `${name}: replicas set beside its HPA`,
            ).to.equal(undefined);
          }
        }
      });

      it("refuses env overrides of every variable it sets itself, but the log level and telemetry", () => {
        const values = parse(readFileSync(`${chartPath}/${valueFile}`, "utf8")) as ValueFile;
        const refused = refusedNames("env");
        for (const { service: name, env } of everyDeployment(chart)) {
          const pools = Object.values(values.components?.[name]?.pools ?? {});
          const fromValueFile = new Set([
            ...Object.keys(values.config?.env ?? {}),
            ...Object.keys(values.components?.[name]?.env ?? {}),
            ...pools.flatMap((pool) => Object.keys(pool.env ?? {})),
          ]);
          const open = variablesOf(env).filter(
            (variable) =>
              !fromValueFile.has(variable) && !overridable(variable) && !refused.includes(variable),
          );
          expect(open, `${name}: variables the chart sets that an env override may change`).to.deep.equal([]);
        }
      });
    });
  }

  describe("with examples/production.yaml", () => {
    const valueFile = "examples/production.yaml";
    let chart: RenderedChart;
    let existingSecrets: string[];

    before(async () => {
      chart = new RenderedChart(
        await renderChart(chartPath, { release, namespace, valueFiles: [valueFile] }),
        namespace,
      );
      const found: string[] = [];
      const collect = (value: unknown): void => {
        if (Array.isArray(value)) value.forEach(collect);
        else if (value && typeof value === "object") {
          for (const [key, inner] of Object.entries(value)) {
            if (key === "existingSecret" && typeof inner === "string" && inner !== "") found.push(inner);
            else collect(inner);
          }
        }
      };
      collect(parse(readFileSync(`${chartPath}/${valueFile}`, "utf8")));
      existingSecrets = found;
    });

    it("runs no PostgreSQL or Redis of its own", () => {
      const identities = chart.workloads().map((workload) => workload.identity);
      const migrationJobs = migrationContainers(chart).map((migration) => migration.workload.identity);
      const tests = chart.workloads().filter((workload) => hookEvents(workload.object).includes("test"));
      const others = identities.filter(
        (identity) =>
          !components.includes(identity) &&
          !migrationJobs.includes(identity) &&
          !tests.some((t) => t.identity === identity),
      );
      expect(others, "workloads beside the components, migrations and helm tests").to.deep.equal([]);
      const images = chart
        .workloads()
        .flatMap((workload) => workload.spec.containers.map((container) => container.image ?? ""));
      expect(
        images.filter((image) => /postgres|redis/i.test(image)),
        "database images",
      ).to.deep.equal([]);
    });

    it("takes every secret from the existingSecret and renders none", () => {
      expect(existingSecrets, "existingSecret in the value file").to.not.be.empty;
      const referenced = serviceContainers(chart).flatMap(({ env }) =>
        env.secretRefs.map((ref) => ref.secret),
      );
      expect(referenced).to.not.be.empty;
      expect(
        [...new Set(referenced)].filter((name) => !existingSecrets.includes(name)),
        "other Secrets",
      ).to.deep.equal([]);
      const rendered = chart.ofKind<ISecret>("Secret").map((secret) => secret.metadata.name);
      expect(
        rendered.filter((name) => existingSecrets.includes(name)),
        "the existingSecret is rendered",
      ).to.deep.equal([]);
    });

    it("serves one host through an Ingress: /v1 to the gateway's HTTP port, / to the console's", () => {
      const paths = chart
        .ofKind<IIngress>("Ingress")
        .flatMap((ingress) => (ingress.spec?.rules ?? []).flatMap((rule) => rule.http?.paths ?? []));
      const routed = paths.map((path) => ({ path: path.path ?? "", backend: path.backend.service }));
      expect(routed.map(({ path }) => path).sort(), "Ingress paths (the registry's paths)").to.deep.equal(
        publicPaths.map(({ path }) => path).sort(),
      );
      for (const { path, backend } of routed) {
        const owner = publicPaths.find((entry) => entry.path === path)?.service ?? "";
        expect(backend, `Ingress ${path}`).to.not.equal(undefined);
        if (!backend) continue;
        const service = chart.find<IService>("Service", backend.name);
        expect(service, `Ingress backend Service ${backend.name}`).to.not.equal(undefined);
        if (!service) continue;
        const { workload, env } = componentContainer(chart, owner);
        expect(
          chart.workloadsBehind(service).map((w) => w.identity),
          `Ingress ${path}`,
        ).to.deep.equal([owner]);
        const servicePort =
          backend.port?.number ??
          service.spec?.ports?.find((port) => port.name === backend.port?.name)?.port ??
          -1;
        expect(
          targetPort(service, servicePort, workload),
          `Ingress ${path} → ${backend.name}:${servicePort}`,
        ).to.equal(setting(schemaOf(owner), env.values, "HTTP_PORT"));
      }
      expect(publicPaths, "the registry's public paths").to.deep.include.members([
        { path: "/v1", service: "gateway" },
        { path: "/", service: "console" },
      ]);
      // One origin: run urls (runs), the console's own origin, its API_URL and the gateway's (artifact
      // urls) are the Ingress host.
      for (const name of ["runs", "console"]) {
        expect(componentContainer(chart, name).env.values.APP_URL, `${name} APP_URL`).to.equal(
          "https://testrun.example.com",
        );
      }
      for (const name of ["console", "gateway"]) {
        expect(componentContainer(chart, name).env.values.API_URL, `${name} API_URL`).to.equal(
          "https://testrun.example.com",
        );
      }
    });

    it("signs in with OpenID Connect, the client secret from a Secret, in the console and its migration", () => {
      const containers = serviceContainers(chart).filter(({ service }) => service === "console");
      expect(containers.map(({ label }) => label)).to.have.length.greaterThan(1);
      for (const { label, env } of containers) {
        expect(env.values.OIDC_ISSUER_URL, `${label} OIDC_ISSUER_URL`).to.match(/^https:\/\//);
        expect(env.values.OIDC_CLIENT_ID, `${label} OIDC_CLIENT_ID`).to.be.a("string").that.is.not.empty;
        const ref = env.secretRefs.find((candidate) => candidate.variable === "OIDC_CLIENT_SECRET");
        expect(ref, `${label} OIDC_CLIENT_SECRET from a Secret`).to.deep.include({
          secret: "testrun-secrets",
          key: "OIDC_CLIENT_SECRET",
        });
      }
    });

    it("autoscales the gateway and the executor", () => {
      const scaled = chart
        .ofKind<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler")
        .filter(
          (hpa) => hpa.apiVersion === "autoscaling/v2" && hpa.spec?.scaleTargetRef.kind === "Deployment",
        )
        .map((hpa) => hpa.spec?.scaleTargetRef.name);
      for (const { label, workload } of [
        ...componentContainers(chart, "gateway"),
        ...componentContainers(chart, "executor"),
      ])
        expect(scaled, `${label} HPA`).to.include(workload.object.metadata.name);
    });
  });

  describe("with the Gateway API HTTPRoute on", () => {
    let chart: RenderedChart;

    before(async () => {
      const set = [
        "httpRoute.enabled=true",
        "httpRoute.parentRefs[0].name=public",
        "httpRoute.hostnames[0]=testrun.example.com",
      ];
      chart = new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
    });

    it("renders an HTTPRoute that validates: /v1 to the gateway's HTTP port, / to the console's", async () => {
      const routes = chart.ofKind<IHTTPRoute>("HTTPRoute");
      expect(routes, "HTTPRoutes").to.have.lengthOf(1);
      for (const route of routes) await validateObject(route);
      const rules = routes.flatMap((route) => route.spec.rules ?? []);
      const routed = rules.flatMap((rule) =>
        (rule.matches ?? []).map((match) => ({
          path: match.path?.value ?? "",
          backends: rule.backendRefs ?? [],
        })),
      );
      expect(routed.map(({ path }) => path).sort(), "HTTPRoute paths").to.deep.equal(
        publicPaths.map(({ path }) => path).sort(),
      );
      for (const { path, backends } of routed) {
        const owner = publicPaths.find((entry) => entry.path === path)?.service ?? "";
        const { workload, env } = componentContainer(chart, owner);
        expect(backends, `HTTPRoute ${path} backendRefs`).to.have.lengthOf(1);
        for (const backend of backends) {
          const service = chart.find<IService>("Service", backend.name);
          expect(service, `HTTPRoute backend Service ${backend.name}`).to.not.equal(undefined);
          if (!service) continue;
          expect(
            chart.workloadsBehind(service).map((w) => w.identity),
            `HTTPRoute ${path}`,
          ).to.deep.equal([owner]);
          expect(
            targetPort(service, backend.port ?? -1, workload),
            `HTTPRoute ${path} → ${backend.name}`,
          ).to.equal(setting(schemaOf(owner), env.values, "HTTP_PORT"));
        }
      }
      expect(componentContainer(chart, "console").env.values.APP_URL).to.equal("https://testrun.example.com");
      expect(componentContainer(chart, "runs").env.values.APP_URL).to.equal("https://testrun.example.com");
    });
  });

  describe("the HTTP ports when the gateway trusts X-Forwarded-For", () => {
    const ingressNginx = { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } };
    const render = async (set: string[]) =>
      new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
    /** Who may reach a component's HTTP port: its sources (the helm test pod left out), and the trusted hops. */
    const httpAccess = (chart: RenderedChart, name: string) => {
      const { workload, env } = componentContainer(chart, name);
      const httpPort = setting(schemaOf(name), env.values, "HTTP_PORT") as number;
      const helmTest = chart.workloads().filter((w) => hookEvents(w.object).includes("test"));
      return [...chart.ingressSources(workload, httpPort)]
        .filter((source) => !helmTest.some((w) => w.identity === source))
        .sort();
    };
    const gatewayHops = (chart: RenderedChart) =>
      componentContainer(chart, "gateway").env.values.TRUST_PROXY_HOPS;
    const onlyFrom = (selector: unknown) => [`outside: namespaceSelector ${JSON.stringify(selector)}`];

    for (const { on, set } of [
      { on: "the ingress", set: ["ingress.enabled=true"] },
      {
        on: "the HTTPRoute",
        set: [
          "httpRoute.enabled=true",
          "httpRoute.parentRefs[0].name=public",
          "httpRoute.hostnames[0]=a.example",
        ],
      },
      { on: "config.trustProxyHops=2", set: ["config.trustProxyHops=2"] },
    ]) {
      it(`admits only the ingress controller (ingress-nginx by default) with ${on}`, async () => {
        const chart = await render(set);
        expect(Number(gatewayHops(chart)), "TRUST_PROXY_HOPS").to.be.above(0);
        // The console counts its anonymous bounds by the same client address (auth-limit.ts).
        expect(componentContainer(chart, "console").env.values.TRUST_PROXY_HOPS).to.equal(gatewayHops(chart));
        for (const name of ["gateway", "console"]) {
          expect(httpAccess(chart, name), `${name} HTTP port`).to.deep.equal(onlyFrom(ingressNginx));
        }
        for (const policy of chart.ofKind("NetworkPolicy")) await validateObject(policy);
      });
    }

    it("admits anyone when nothing is trusted: no ingress, or config.trustProxyHops=0", async () => {
      for (const set of [[], ["ingress.enabled=true", "config.trustProxyHops=0"]]) {
        const chart = await render(set);
        expect(gatewayHops(chart), String(set)).to.equal("0");
        expect(componentContainer(chart, "console").env.values.TRUST_PROXY_HOPS, String(set)).to.equal("0");
        expect(httpAccess(chart, "gateway"), String(set)).to.deep.equal(["anywhere"]);
      }
    });

    it("takes the controller's namespace and pod labels, or networkPolicy.gatewayFrom instead", async () => {
      const labelled = await render([
        "ingress.enabled=true",
        "networkPolicy.ingressController.namespace=traefik",
        "networkPolicy.ingressController.podLabels.app\\.kubernetes\\.io/name=traefik",
      ]);
      expect(gatewayControllerPeer(labelled), "the gateway's HTTP rule").to.deep.include({
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "traefik" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "traefik" } },
      });
      const anyNamespace = await render([
        "ingress.enabled=true",
        "networkPolicy.ingressController.namespace=",
        "networkPolicy.ingressController.podLabels.app=edge",
      ]);
      expect(gatewayControllerPeer(anyNamespace)).to.deep.include({
        namespaceSelector: {},
        podSelector: { matchLabels: { app: "edge" } },
      });
      const given = await render([
        "ingress.enabled=true",
        "networkPolicy.gatewayFrom[0].ipBlock.cidr=10.0.0.0/8",
      ]);
      expect(httpAccess(given, "gateway")).to.deep.equal(["outside: ipBlock 10.0.0.0/8"]);
    });

    it("admits the metrics ports only from metrics.scrapeFrom (nobody by default), never through the Ingress", async () => {
      const metricsAccess = (chart: RenderedChart) =>
        registry.map((service) => {
          const { workload, env } = componentContainer(chart, service.name);
          const metricsPort = setting(schemaOf(service.name), env.values, "METRICS_PORT") as number;
          return [service.name, [...chart.ingressSources(workload, metricsPort)].sort()];
        });
      const closed = await render(["ingress.enabled=true"]);
      expect(metricsAccess(closed)).to.deep.equal(registry.map((service) => [service.name, []]));
      for (const ingress of closed.ofKind<{ spec?: unknown }>("Ingress")) {
        const ports = JSON.stringify(ingress.spec).match(/"number":(\d+)/g) ?? [];
        for (const service of registry)
          expect(ports, `the Ingress sends to ${service.name}'s metrics port`).to.not.include(
            `"number":${service.metricsPort}`,
          );
      }
      const monitoring = { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } };
      const scraped = await render([
        "metrics.scrapeFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring",
      ]);
      expect(metricsAccess(scraped)).to.deep.equal(
        registry.map((service) => [
          service.name,
          [`outside: namespaceSelector ${JSON.stringify(monitoring)}`],
        ]),
      );
      for (const policy of scraped.ofKind("NetworkPolicy")) await validateObject(policy);
    });

    it("refuses to render with an ingress controller of neither namespace nor labels, saying what to set", async () => {
      const result = await tryRenderChart(chartPath, {
        release,
        namespace,
        set: ["ingress.enabled=true", "networkPolicy.ingressController.namespace="],
      });
      expect(result.code, "helm template exit code").to.not.equal(0);
      expect(result.stderr).to.contain("networkPolicy.ingressController").and.to.contain("gatewayFrom");
    });

    /** The peers of the gateway's HTTP rule that are not the helm test pod. */
    function gatewayControllerPeer(chart: RenderedChart) {
      const port = setting(schemaOf("gateway"), componentContainer(chart, "gateway").env.values, "HTTP_PORT");
      const policy = chart
        .ofKind<INetworkPolicy>("NetworkPolicy")
        .find(
          (candidate) =>
            candidate.metadata?.name === chart.component("gateway").workload.object.metadata.name,
        );
      const rule = policy?.spec?.ingress?.find((r) => r.ports?.some((p) => p.port === port));
      return rule?.from?.find((peer) => peer.namespaceSelector !== undefined);
    }
  });

  describe("the registry (services.yaml) and the values", () => {
    it("has a components entry in values.yaml for every service, and none for anything else", () => {
      const values = parse(readFileSync(`${chartPath}/values.yaml`, "utf8")) as ValueFile;
      const entries = Object.keys(values.components ?? {});
      expect(
        components.filter((name) => !entries.includes(name)),
        "services of services.yaml without components.<name> in values.yaml: copy another component's entry",
      ).to.deep.equal([]);
      expect(
        entries.filter((name) => !components.includes(name)),
        "components.<name> in values.yaml that services.yaml does not list",
      ).to.deep.equal([]);
    });

    it("migrates exactly the services that own a schema (src/db), and ports agree with the code", () => {
      expect(
        registry
          .filter((service) => service.migrates)
          .map((service) => service.name)
          .sort(),
        "services.yaml migrates: true (must be the services with a src/db folder)",
      ).to.deep.equal(schemaOwners);
      for (const service of registry) {
        const schema = schemaOf(service.name);
        expect(
          setting(schema, {}, "PORT"),
          `${service.name}: services.yaml port vs src/config.ts PORT`,
        ).to.equal(service.port);
        expect(
          "HTTP_PORT" in schema.shape ? setting(schema, {}, "HTTP_PORT") : undefined,
          `${service.name}: services.yaml httpPort vs src/config.ts HTTP_PORT`,
        ).to.equal(service.httpPort);
        expect(
          setting(schema, {}, "METRICS_PORT"),
          `${service.name}: services.yaml metricsPort vs src/config.ts METRICS_PORT`,
        ).to.equal(service.metricsPort);
      }
    });

    it("refuses a values file without an entry for a service, naming it", async () => {
      const result = await tryRenderChart(chartPath, {
        release,
        namespace,
        set: ["components.console=null"],
      });
      expect(result.code, "helm template exit code").to.not.equal(0);
      expect(result.stderr).to.contain("components.console");
    });
  });

  describe("console OpenID Connect settings", () => {
    const oidc = [
      "console.oidc.issuerUrl=https://idp.example.com",
      "console.oidc.clientId=testrun",
      "console.oidc.existingSecret=testrun-oidc",
    ];

    it("takes OIDC_CLIENT_SECRET from console.oidc.existingSecret when sign-in is configured", async () => {
      const chart = new RenderedChart(
        await renderChart(chartPath, { release, namespace, set: oidc }),
        namespace,
      );
      const { env } = componentContainer(chart, "console");
      expect(env.values.OIDC_ISSUER_URL).to.equal("https://idp.example.com");
      expect(env.values.OIDC_CLIENT_ID).to.equal("testrun");
      expect(env.secretRefs.find((ref) => ref.variable === "OIDC_CLIENT_SECRET")).to.deep.include({
        secret: "testrun-oidc",
        key: "OIDC_CLIENT_SECRET",
      });
      const parsed = schemaOf("console").safeParse(env.values);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).to.equal(true);
    });

    it("gives no OIDC variable without it", async () => {
      const chart = new RenderedChart(await renderChart(chartPath, { release, namespace }), namespace);
      const { env } = componentContainer(chart, "console");
      expect(variablesOf(env).filter((variable) => variable.startsWith("OIDC_"))).to.deep.equal([]);
    });

    for (const left of oidc) {
      it(`refuses a partial configuration (without ${left.split("=")[0]}), saying what to set`, async () => {
        const set = oidc.filter((expression) => expression !== left);
        const result = await tryRenderChart(chartPath, { release, namespace, set });
        expect(result.code, "helm template exit code").to.not.equal(0);
        expect(result.stderr).to.contain("console.oidc: set issuerUrl, clientId and existingSecret");
      });
    }
  });

  describe("the runs service's artifact store", () => {
    const s3 = [
      "artifacts.store=s3",
      "artifacts.s3.bucket=testrun-artifacts",
      "artifacts.s3.endpoint=https://minio.example.com",
      "artifacts.s3.forcePathStyle=true",
      "artifacts.s3.existingSecret=testrun-s3",
    ];
    const runsEnv = async (set: string[]) =>
      componentContainer(
        new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace),
        "runs",
      ).env;

    it("keeps artifacts in PostgreSQL by default, for 30 days, with no S3 setting or secret", async () => {
      const env = await runsEnv([]);
      expect(env.values.ARTIFACT_STORE).to.equal("postgres");
      expect(env.values.ARTIFACT_RETENTION_DAYS).to.equal("30");
      expect(variablesOf(env).filter((variable) => variable.startsWith("ARTIFACT_S3_"))).to.deep.equal([]);
    });

    it("points the runs service alone at an S3 bucket, its credentials from artifacts.s3.existingSecret", async () => {
      const env = await runsEnv(s3);
      expect(env.values).to.deep.include({
        ARTIFACT_STORE: "s3",
        ARTIFACT_S3_BUCKET: "testrun-artifacts",
        ARTIFACT_S3_ENDPOINT: "https://minio.example.com",
        ARTIFACT_S3_FORCE_PATH_STYLE: "true",
        ARTIFACT_S3_REGION: "us-east-1",
      });
      for (const key of ["ARTIFACT_S3_ACCESS_KEY_ID", "ARTIFACT_S3_SECRET_ACCESS_KEY"])
        expect(env.secretRefs.find((ref) => ref.variable === key)).to.deep.include({
          secret: "testrun-s3",
          key,
        });
      const parsed = schemaOf("runs").safeParse(env.values);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).to.equal(true);
      // Without a Secret: the pods' own identity, no static credentials.
      const role = await runsEnv(s3.filter((expression) => !expression.includes("existingSecret")));
      expect(role.secretRefs.filter((ref) => ref.variable.startsWith("ARTIFACT_"))).to.deep.equal([]);
    });

    it("refuses store s3 without a bucket, saying what to set", async () => {
      const result = await tryRenderChart(chartPath, { release, namespace, set: ["artifacts.store=s3"] });
      expect(result.code, "helm template exit code").to.not.equal(0);
      expect(result.stderr).to.contain("artifacts.s3.bucket is required");
    });
  });

  describe("the executors' egress", () => {
    const dualStack = [
      "egress.podCidrs={10.244.0.0/16,fd00:10:244::/56}",
      "egress.serviceCidrs={10.96.0.0/12}",
      "egress.nodeCidrs={10.0.0.0/20}",
      "egress.denyCidrs={192.168.0.0/16}",
      "egress.allowCidrs={127.0.0.0/8,::1/128}",
    ];
    const render = async (set: string[]) =>
      new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
    const egressPolicy = (chart: RenderedChart) =>
      chart.find<INetworkPolicy>("NetworkPolicy", `${release}-testrun-executor-egress`);
    const workloadOf = (chart: RenderedChart, component: string) => {
      const found = chart.workloads().find((w) => w.labels["app.kubernetes.io/component"] === component);
      if (!found) throw new Error(`no ${component} workload`);
      return found;
    };

    it("gives executors and webhook deliveries EGRESS_DENY_CIDRS of the cluster's ranges and denyCidrs, EGRESS_ALLOW_CIDRS, both parsed by their config", async () => {
      const chart = await render(dualStack);
      for (const component of ["executor", "automation"]) {
        const { env } = componentContainer(chart, component);
        expect(env.values.EGRESS_DENY_CIDRS, component).to.equal(
          "10.244.0.0/16,fd00:10:244::/56,10.96.0.0/12,10.0.0.0/20,192.168.0.0/16",
        );
        expect(env.values.EGRESS_ALLOW_CIDRS, component).to.equal("127.0.0.0/8,::1/128");
        expect(setting(schemaOf(component), env.values, "EGRESS_DENY_CIDRS"), component).to.have.length(5);
      }
      // The ranges the docs' evaluation install passes, nothing more.
      const byDefault = componentContainer(await render([]), "executor").env.values;
      expect([byDefault.EGRESS_DENY_CIDRS, byDefault.EGRESS_ALLOW_CIDRS]).to.deep.equal([
        "10.244.0.0/16,10.96.0.0/12,172.18.0.0/16",
        "",
      ]);
    });

    it("refuses to render without the cluster's pod, Service and node ranges, naming those missing, where to find them and the opt-out", async () => {
      const ranges = [
        "egress.podCidrs={10.244.0.0/16}",
        "egress.serviceCidrs={10.96.0.0/12}",
        "egress.nodeCidrs={172.18.0.0/16}",
      ];
      for (const [index, given] of [[], ...ranges.map((range) => [range]), ranges.slice(0, 2)].entries()) {
        const result = await tryRenderChart(chartPath, {
          release,
          namespace,
          set: given,
          clusterRanges: false,
        });
        const missing = ranges
          .filter((range) => !given.includes(range))
          .map((range) => range.slice(0, range.indexOf("=")));
        expect(result.code, `case ${index}`).to.not.equal(0);
        expect(result.stderr).to.contain(
          `the cluster's pod, Service and node ranges are required (missing: ${missing.join(", ")})`,
        );
        for (const hint of [
          "--cluster-cidr",
          "kubectl get servicecidr kubernetes",
          "kubectl get nodes -o wide",
          "egress.allowClusterRanges=true",
        ])
          expect(result.stderr, hint).to.contain(hint);
      }
      const all = await tryRenderChart(chartPath, { release, namespace, set: ranges, clusterRanges: false });
      expect(all.code, all.stderr).to.equal(0);
    });

    it("renders without them with egress.allowClusterRanges, still refusing the ranges that are set", async () => {
      const chart = new RenderedChart(
        await renderChart(chartPath, {
          release,
          namespace,
          set: ["egress.allowClusterRanges=true", "egress.serviceCidrs={10.96.0.0/12}"],
          clusterRanges: false,
        }),
        namespace,
      );
      for (const component of ["executor", "automation"])
        expect(componentContainer(chart, component).env.values.EGRESS_DENY_CIDRS, component).to.equal(
          "10.96.0.0/12",
        );
    });

    it("is installed as the docs say: their evaluation command passes the ranges it requires", async () => {
      const fixture = parse(readFileSync(clusterRangesValues, "utf8")) as {
        egress: Record<string, string[]>;
      };
      for (const doc of ["README.md", "docs/deploy.md", "helm/testrun/README.md"]) {
        const text = readFileSync(`${repoRoot}${doc}`, "utf8").replaceAll("\\\n", " ");
        const command = text.split("\n").find((line) => line.startsWith("helm install testrun helm/testrun"));
        expect(command, `${doc}: the evaluation install`).to.be.a("string");
        const set = [...(command ?? "").matchAll(/--set '([^']*)'/g)].map((match) => match[1] ?? "");
        expect(set, doc).to.deep.equal(
          Object.entries(fixture.egress).map(([key, cidrs]) => `egress.${key}={${cidrs.join(",")}}`),
        );
        const result = await tryRenderChart(chartPath, { release, namespace, set, clusterRanges: false });
        expect(result.code, `${doc}: ${result.stderr}`).to.equal(0);
      }
    });

    it("gives executors EGRESS_CLUSTER_DOMAIN and EGRESS_ALLOW_CLUSTER_NAMES, parsed by their config", async () => {
      const executor = schemaOf("executor");
      const byDefault = componentContainer(await render([]), "executor").env.values;
      expect(setting(executor, byDefault, "EGRESS_CLUSTER_DOMAIN")).to.equal("cluster.local");
      expect(setting(executor, byDefault, "EGRESS_ALLOW_CLUSTER_NAMES")).to.equal(false);
      const set = componentContainer(
        await render(["egress.clusterDomain=corp.internal", "egress.allowClusterNames=true"]),
        "executor",
      ).env.values;
      expect(setting(executor, set, "EGRESS_CLUSTER_DOMAIN")).to.equal("corp.internal");
      expect(setting(executor, set, "EGRESS_ALLOW_CLUSTER_NAMES")).to.equal(true);
    });

    it("renders an egress NetworkPolicy that validates: DNS, the services executors call, Redis, the world but the cluster's ranges", async () => {
      const chart = await render([...dualStack, "egress.extraRules[0].to[0].ipBlock.cidr=10.244.7.0/24"]);
      const policy = egressPolicy(chart);
      expect(policy, "the executors' egress NetworkPolicy").to.not.equal(undefined);
      if (!policy) return;
      await validateObject(policy);
      expect(policy.spec?.policyTypes).to.deep.equal(["Egress"]);
      const selected = chart
        .workloads()
        .filter((w) => selectorMatches(policy.spec?.podSelector ?? {}, w.labels));
      expect(selected.map((w) => w.identity)).to.deep.equal([chart.component("executor").workload.identity]);
      const rules = policy.spec?.egress ?? [];
      expect(rules[0]).to.deep.equal({
        to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } } }],
        ports: [
          { port: 53, protocol: "UDP" },
          { port: 53, protocol: "TCP" },
        ],
      });
      const executor = chart.component("executor").workload;
      const portOf = (name: string) => registry.find((service) => service.name === name)?.port ?? 0;
      for (const name of ["runs", "catalog"])
        expect(chart.egressAllowed(executor, workloadOf(chart, name), portOf(name)), name).to.equal(true);
      expect(chart.egressAllowed(executor, workloadOf(chart, "redis"), 6379), "redis").to.equal(true);
      for (const name of ["keys", "billing", "gateway", "console"])
        expect(chart.egressAllowed(executor, workloadOf(chart, name), portOf(name)), name).to.equal(false);
      const world = rules.find((rule) => rule.to?.some((peer) => peer.ipBlock?.cidr === "0.0.0.0/0"));
      expect(world?.ports, "the world, on any port").to.equal(undefined);
      expect(world?.to).to.deep.equal([
        {
          ipBlock: {
            cidr: "0.0.0.0/0",
            except: [
              "169.254.0.0/16",
              "100.100.100.200/32",
              "168.63.129.16/32",
              "10.244.0.0/16",
              "10.96.0.0/12",
              "10.0.0.0/20",
              "192.168.0.0/16",
            ],
          },
        },
        {
          ipBlock: {
            cidr: "::/0",
            except: [
              "fe80::/10",
              "fd00:ec2::254/128",
              "fd00:ec2::23/128",
              "fd20:ce::254/128",
              "fd00:42::42/128",
              "fd00:10:244::/56",
            ],
          },
        },
      ]);
      expect(rules.at(-1)).to.deep.equal({ to: [{ ipBlock: { cidr: "10.244.7.0/24" } }] });
    });

    it("takes other DNS servers, and renders no egress policy without networkPolicy.enabled", async () => {
      const nodeLocal = await render(["egress.dnsTo[0].ipBlock.cidr=169.254.20.10/32"]);
      expect(egressPolicy(nodeLocal)?.spec?.egress?.[0]?.to).to.deep.equal([
        { ipBlock: { cidr: "169.254.20.10/32" } },
      ]);
      expect(egressPolicy(await render(["networkPolicy.enabled=false"]))).to.equal(undefined);
    });

    it("refuses a range that is not in CIDR form, naming the value", async () => {
      for (const set of [
        "egress.podCidrs={10.0.0.1}",
        "egress.nodeCidrs={10.0.0.0}",
        "egress.denyCidrs={example.com/8}",
      ]) {
        const result = await tryRenderChart(chartPath, { release, namespace, set: [set] });
        expect(result.code, set).to.not.equal(0);
        expect(result.stderr).to.contain(set.slice("egress.".length, set.indexOf("=")));
      }
    });
  });

  describe("componentDefaults, merged into each component (and a pool over the executor)", () => {
    let chart: RenderedChart;
    const deployment = (name: string) => {
      const found = chart.workloads().find((w) => w.object.metadata.name === `${release}-testrun-${name}`);
      if (!found) throw new Error(`no Deployment ${name}`);
      return found;
    };
    const podAnnotations = (name: string) =>
      // A Deployment's object is typed as any manifest; its pod template is known to be there.
      (
        deployment(name).object as unknown as {
          spec: { template: { metadata: { annotations: Record<string, string> } } };
        }
      ).spec.template.metadata.annotations;

    before(async () => {
      const set = [
        "componentDefaults.resources.limits.memory=512Mi",
        "componentDefaults.nodeSelector.disk=ssd",
        "components.gateway.nodeSelector.zone=a",
        "componentDefaults.tolerations[0].key=dedicated",
        "components.keys.tolerations[0].key=own",
        "componentDefaults.podAnnotations.team=platform",
        "components.runs.podAnnotations.owner=runs",
        "componentDefaults.env.EXAMPLE_NOTE=defaults",
        "components.runs.env.EXAMPLE_NOTE=runs",
        "componentDefaults.priorityClassName=standard",
        "components.executor.pools.quick.stepKinds=http",
        "components.executor.pools.quick.nodeSelector.pool=quick",
        "components.executor.pools.web.stepKinds=browser",
      ];
      chart = new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
    });

    it("merges maps key by key, the component's keys winning", () => {
      expect(deployment("keys").spec.containers[0]?.resources).to.deep.equal({
        requests: { cpu: "50m", memory: "128Mi" },
        limits: { memory: "512Mi" },
      });
      // The gateway and the executor set their own limits in values.yaml.
      expect(deployment("gateway").spec.containers[0]?.resources?.limits).to.deep.equal({ memory: "384Mi" });
      expect(deployment("gateway").spec.nodeSelector).to.deep.equal({ disk: "ssd", zone: "a" });
      expect(deployment("catalog").spec.nodeSelector).to.deep.equal({ disk: "ssd" });
      expect(podAnnotations("runs")).to.include({ team: "platform", owner: "runs" });
      expect(podAnnotations("billing")).to.include({ team: "platform" }).and.not.have.property("owner");
      expect(componentContainer(chart, "runs").env.values.EXAMPLE_NOTE).to.equal("runs");
      expect(componentContainer(chart, "console").env.values.EXAMPLE_NOTE).to.equal("defaults");
    });

    it("replaces lists and plain values whole", () => {
      expect(deployment("keys").spec.tolerations).to.deep.equal([{ key: "own" }]);
      expect(deployment("billing").spec.tolerations).to.deep.equal([{ key: "dedicated" }]);
      expect(deployment("automation").spec.priorityClassName).to.equal("standard");
    });

    it("gives executor pools the defaults under the executor's values and their own", () => {
      expect(deployment("executor-quick").spec.nodeSelector).to.deep.equal({ disk: "ssd", pool: "quick" });
      expect(deployment("executor-web").spec.nodeSelector).to.deep.equal({ disk: "ssd" });
      expect(deployment("executor-web").spec.tolerations).to.deep.equal([{ key: "dedicated" }]);
      expect(deployment("executor-web").spec.containers[0]?.resources?.limits).to.deep.equal({
        memory: "1536Mi",
      });
    });
  });

  describe("the registry's env (services.yaml)", () => {
    /** What the chart gives every component (and its callees' <NAME>_URL), whatever its `env` says. */
    const everyComponent =
      /^(LOG_LEVEL|PORT|HTTP_PORT|METRICS_PORT|SHUTDOWN_(DRAIN|TIMEOUT)_MS|NODE_OPTIONS|OTEL_.*|RPC_.*)$/;

    it("sets a component only the variables its entry names, beyond what every component gets", async () => {
      for (const valueFile of ["values.yaml", "examples/production.yaml"]) {
        const chart = new RenderedChart(
          await renderChart(chartPath, { release, namespace, valueFiles: [valueFile] }),
          namespace,
        );
        for (const service of registry) {
          for (const { label, env } of componentContainers(chart, service.name)) {
            const callees = service.calls.map((callee) => `${callee.toUpperCase()}_URL`);
            // The plain values (its ConfigMap): the Secret's and the pod's own are not the values'.
            const fromSecret = [...service.secrets, ...service.optionalSecrets, service.podNameVariable];
            const own = Object.keys(env.values).filter(
              (variable) =>
                !everyComponent.test(variable) &&
                !callees.includes(variable) &&
                !fromSecret.includes(variable),
            );
            expect(
              own.filter((variable) => !service.env.includes(variable)),
              `${valueFile}: ${label} variables its registry env does not name`,
            ).to.deep.equal([]);
          }
        }
      }
    });

    it("refuses a variable the chart does not know how to set, naming it", async () => {
      const copy = mkdtempSync(`${tmpdir()}/testrun-chart-`);
      try {
        cpSync(chartPath, copy, { recursive: true });
        const services = readFileSync(`${copy}/services.yaml`, "utf8");
        writeFileSync(
          `${copy}/services.yaml`,
          services.replace("  - name: keys\n", "  - name: keys\n    env: [BOGUS_SETTING]\n"),
        );
        const result = await tryRenderChart(copy, { release, namespace });
        expect(result.code, "helm template exit code").to.not.equal(0);
        expect(result.stderr).to.contain("services.yaml gives keys the variable BOGUS_SETTING");
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    });
  });

  describe("values.schema.json", () => {
    for (const expression of [
      "bogus=1",
      "components.keys.bogus=1",
      "componentDefaults.bogus=1",
      "componentDefaults.concurrency=1",
    ]) {
      it(`rejects an unknown key (--set ${expression})`, async () => {
        const result = await tryRenderChart(chartPath, { release, namespace, set: [expression] });
        expect(result.code, "helm template exit code").to.not.equal(0);
        expect(result.stderr).to.contain(expression.split(/[.=]/).at(-2) ?? expression);
      });
    }

    const refusals = [
      { expression: "components.gateway.env.PORT=1", name: "PORT" },
      { expression: "config.env.KEYS_URL=http://elsewhere:7101", name: "KEYS_URL" },
      { expression: "components.executor.env.EXECUTOR_NAME=x", name: "EXECUTOR_NAME" },
      { expression: "components.runs.env.DATABASE_URL=postgres://x", name: "DATABASE_URL" },
      { expression: "components.runs.env.MAX_RUNNING_PER_PROJECT=2", name: "MAX_RUNNING_PER_PROJECT" },
      { expression: "components.catalog.env.NEW_PROJECT_CREDITS=5", name: "NEW_PROJECT_CREDITS" },
      {
        expression: "components.catalog.env.NEW_PROJECT_GRANTS_PER_ORGANIZATION=50",
        name: "NEW_PROJECT_GRANTS_PER_ORGANIZATION",
      },
      { expression: "components.executor.env.EGRESS_DENY_CIDRS=", name: "EGRESS_DENY_CIDRS" },
      { expression: "componentDefaults.env.LEASE_MS=1", name: "LEASE_MS" },
      {
        expression: "components.keys.podLabels.app\\.kubernetes\\.io/component=other",
        name: "app.kubernetes.io/component",
      },
    ];
    for (const { expression, name } of refusals) {
      it(`rejects what the chart sets itself (--set ${expression})`, async () => {
        const result = await tryRenderChart(chartPath, { release, namespace, set: [expression] });
        expect(result.code, "helm template exit code").to.not.equal(0);
        expect(result.stderr).to.contain(name);
      });
    }

    it("accepts other env overrides and pod labels, and the log level per component", async () => {
      const set = [
        "components.gateway.env.RATE_LIMIT_PER_MINUTE=100",
        "components.runs.env.LOG_LEVEL=debug",
        "components.keys.podLabels.team=platform",
      ];
      const chart = new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
      expect(componentContainer(chart, "gateway").env.values.RATE_LIMIT_PER_MINUTE).to.equal("100");
      expect(componentContainer(chart, "runs").env.values.LOG_LEVEL).to.equal("debug");
      expect(chart.component("keys").workload.labels.team).to.equal("platform");
    });

    it("gives every component config.nodeOptions as NODE_OPTIONS, none when empty, and a component's env may override it", async () => {
      const byDefault = new RenderedChart(await renderChart(chartPath, { release, namespace }), namespace);
      for (const name of components)
        expect(componentContainer(byDefault, name).env.values.NODE_OPTIONS, name).to.equal(
          "--max-semi-space-size=16 --max-old-space-size=192",
        );
      const set = ["config.nodeOptions=", "components.runs.env.NODE_OPTIONS=--max-old-space-size=256"];
      const chart = new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
      expect(componentContainer(chart, "gateway").env.values).to.not.have.property("NODE_OPTIONS");
      expect(componentContainer(chart, "runs").env.values.NODE_OPTIONS).to.equal("--max-old-space-size=256");
    });

    it("sets the runs service's MAX_RUNNING_PER_PROJECT from components.runs.maxRunningPerProject (8 by default)", async () => {
      const byDefault = new RenderedChart(await renderChart(chartPath, { release, namespace }), namespace);
      expect(componentContainer(byDefault, "runs").env.values.MAX_RUNNING_PER_PROJECT).to.equal("8");
      const set = ["components.runs.maxRunningPerProject=3"];
      const chart = new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
      expect(componentContainer(chart, "runs").env.values.MAX_RUNNING_PER_PROJECT).to.equal("3");
      const negative = await tryRenderChart(chartPath, {
        release,
        namespace,
        set: ["components.runs.maxRunningPerProject=-1"],
      });
      expect(negative.code, "helm template exit code").to.not.equal(0);
      expect(negative.stderr).to.contain("maxRunningPerProject");
    });

    it("sets the catalog's NEW_PROJECT_CREDITS from credits.newProject (100 by default), its NEW_PROJECT_GRANTS_PER_ORGANIZATION from credits.newProjectGrantsPerOrganization (3) and the console's OPERATOR_CONTACT from credits.operatorContact (unset by default)", async () => {
      const byDefault = new RenderedChart(await renderChart(chartPath, { release, namespace }), namespace);
      expect(componentContainer(byDefault, "catalog").env.values.NEW_PROJECT_CREDITS).to.equal("100");
      expect(
        componentContainer(byDefault, "catalog").env.values.NEW_PROJECT_GRANTS_PER_ORGANIZATION,
      ).to.equal("3");
      expect(componentContainer(byDefault, "console").env.values).to.not.have.property("OPERATOR_CONTACT");
      for (const name of components.filter((c) => c !== "catalog"))
        expect(componentContainer(byDefault, name).env.values, name).to.not.have.property(
          "NEW_PROJECT_CREDITS",
        );
      const set = [
        "credits.newProject=0",
        "credits.newProjectGrantsPerOrganization=10",
        "credits.operatorContact=the platform team\\, #testrun on Slack",
      ];
      const chart = new RenderedChart(await renderChart(chartPath, { release, namespace, set }), namespace);
      expect(componentContainer(chart, "catalog").env.values.NEW_PROJECT_CREDITS).to.equal("0");
      expect(componentContainer(chart, "catalog").env.values.NEW_PROJECT_GRANTS_PER_ORGANIZATION).to.equal(
        "10",
      );
      expect(componentContainer(chart, "console").env.values.OPERATOR_CONTACT).to.equal(
        "the platform team, #testrun on Slack",
      );
      for (const refused of [
        "credits.newProject=-1",
        "credits.newProject=1000000001",
        "credits.newProjectGrantsPerOrganization=-1",
        "credits.newProjectGrantsPerOrganization=1000001",
      ]) {
        const result = await tryRenderChart(chartPath, { release, namespace, set: [refused] });
        expect(result.code, refused).to.not.equal(0);
        expect(result.stderr, refused).to.contain(refused.split(/[.=]/)[1] ?? "");
      }
    });

    it("refuses in env overrides only variables the chart sets, and in podLabels only its own labels", async () => {
      const variables = new Set<string>();
      const labels = new Set<string>();
      for (const valueFile of valueFiles) {
        const chart = new RenderedChart(
          await renderChart(chartPath, { release, namespace, valueFiles: [valueFile] }),
          namespace,
        );
        for (const workload of chart.workloads()) {
          for (const container of [...(workload.spec.initContainers ?? []), ...workload.spec.containers]) {
            const env = chart.containerEnv(container, secretPlaceholder, fieldPlaceholder);
            for (const variable of variablesOf(env)) variables.add(variable);
          }
          for (const label of Object.keys(workload.labels)) labels.add(label);
        }
      }
      expect(
        refusedNames("env").filter((variable) => !variables.has(variable)),
        "refused env variables the chart never sets",
      ).to.deep.equal([]);
      expect(
        refusedNames("podLabels").filter((label) => !labels.has(label)),
        "refused pod labels the chart never sets",
      ).to.deep.equal([]);
      for (const label of [
        "app.kubernetes.io/name",
        "app.kubernetes.io/instance",
        "app.kubernetes.io/component",
      ])
        expect(refusedNames("podLabels"), "selector labels refused in podLabels").to.include(label);
    });
  });

  describe("executors, their browsers and their pools", () => {
    const render = async (options: { set?: string[]; valueFiles?: string[] } = {}) =>
      new RenderedChart(await renderChart(chartPath, { release, namespace, ...options }), namespace);
    const executorSchema = () => schemaOf("executor");
    /** What an executor Deployment's pods get: image, volumes, the kinds it takes, its browser contexts. */
    const podOf = (deployment: ServiceContainer) => {
      const { workload, container, env } = deployment;
      const volumeAt = (path: string) => {
        const mount = container.volumeMounts?.find((candidate) => candidate.mountPath === path);
        return workload.spec.volumes?.find((volume) => volume.name === mount?.name);
      };
      return {
        image: container.image,
        shm: volumeAt("/dev/shm")?.emptyDir,
        tmp: volumeAt("/tmp")?.emptyDir,
        kinds: setting(executorSchema(), env.values, "EXECUTOR_STEP_KINDS"),
        contexts: env.values.BROWSER_CONTEXTS,
        sandbox: env.values.BROWSER_SANDBOX,
        seccomp: container.securityContext?.seccompProfile?.type,
        memoryLimit: container.resources?.limits?.memory,
      };
    };

    it("by default runs one executor Deployment taking every kind, with what chromium needs", async () => {
      const chart = await render();
      expect(podOf(componentContainer(chart, "executor"))).to.deep.equal({
        image: "ghcr.io/testrun/testrun-browser:0.1.0",
        shm: { medium: "Memory", sizeLimit: "256Mi" },
        tmp: { sizeLimit: "512Mi" },
        kinds: ["http", "browser", "spec"],
        contexts: "2",
        sandbox: "off",
        seccomp: "RuntimeDefault",
        memoryLimit: "1536Mi",
      });
      // Every other component keeps the lean image and no /dev/shm of its own.
      for (const name of components.filter((component) => component !== "executor"))
        expect(podOf(componentContainer(chart, name)), name).to.include({
          image: "ghcr.io/testrun/testrun:0.1.0",
          shm: undefined,
        });
    });

    it("turns chromium's sandbox on with the seccomp profile it needs (Unconfined unless given), off on RuntimeDefault; bounds the browser processes when told", async () => {
      const unconfined = componentContainer(
        await render({ set: ["components.executor.browser.sandbox=true"] }),
        "executor",
      );
      expect(podOf(unconfined)).to.include({ sandbox: "on", seccomp: "Unconfined" });
      const localhost = await render({
        set: [
          "components.executor.browser.sandbox=true",
          "components.executor.browser.seccompProfile.type=Localhost",
          "components.executor.browser.seccompProfile.localhostProfile=profiles/chromium.json",
          "components.executor.browser.processes=1",
        ],
      });
      const sandboxed = componentContainer(localhost, "executor");
      expect(sandboxed.container.securityContext?.seccompProfile).to.deep.equal({
        type: "Localhost",
        localhostProfile: "profiles/chromium.json",
      });
      expect(sandboxed.env.values).to.include({ BROWSER_SANDBOX: "on", BROWSER_PROCESSES: "1" });
      const off = componentContainer(await render(), "executor");
      expect(podOf(off)).to.include({ sandbox: "off", seccomp: "RuntimeDefault" });
      expect(off.env.values.BROWSER_PROCESSES, "as many as contexts unless set").to.equal(undefined);
      // Everything else stays locked down either way.
      expect(sandboxed.container.securityContext).to.include({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
      expect(sandboxed.container.securityContext?.capabilities?.drop).to.deep.equal(["ALL"]);
    });

    it("runs each pool as its own Deployment, ConfigMap, HPA and PDB; the HTTP pool on the lean image, without /dev/shm", async () => {
      const chart = await render({ valueFiles: ["examples/production.yaml"] });
      const pools = componentContainers(chart, "executor");
      const byName = Object.fromEntries(
        pools.map((pool) => [pool.workload.object.metadata.name, podOf(pool)]),
      );
      expect(byName).to.deep.equal({
        "ci-testrun-executor-browser": {
          image: "ghcr.io/testrun/testrun-browser:0.1.0",
          shm: { medium: "Memory", sizeLimit: "512Mi" },
          tmp: { sizeLimit: "1Gi" },
          // Specs ride with browser tests unless a pool lists them.
          kinds: ["browser", "spec"],
          contexts: "4",
          sandbox: "off",
          seccomp: "RuntimeDefault",
          memoryLimit: "3Gi",
        },
        "ci-testrun-executor-http": {
          image: "ghcr.io/testrun/testrun:0.1.0",
          shm: undefined,
          tmp: { sizeLimit: "64Mi" },
          kinds: ["http"],
          contexts: undefined,
          sandbox: undefined,
          seccomp: "RuntimeDefault",
          memoryLimit: "768Mi",
        },
      });
      for (const pool of pools) {
        const name = pool.workload.object.metadata.name;
        // Its own selector: no other Deployment's pods match it (an HPA or PDB would count them).
        const selector = (pool.workload.object.spec as { selector: LabelSelector }).selector;
        const others = chart
          .workloads()
          .filter((w) => w.object.metadata.name !== name && selectorMatches(selector, w.labels));
        expect(
          others.map((w) => w.object.metadata.name),
          `${name} selects`,
        ).to.deep.equal([]);
        expect(pool.container.envFrom?.[0]?.configMapRef?.name, `${name} ConfigMap`).to.equal(name);
        const hpa = chart.find<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler", name);
        expect(hpa?.spec?.scaleTargetRef.name, `${name} HPA`).to.equal(name);
        const budget = chart.find<IPodDisruptionBudget>("PodDisruptionBudget", name);
        expect(selectorMatches(budget?.spec?.selector ?? {}, pool.workload.labels), `${name} PDB`).to.equal(
          true,
        );
      }
      expect(
        chart.find<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler", "ci-testrun-executor-browser")?.spec,
      ).to.include({ minReplicas: 1, maxReplicas: 10 });
      // One Service, one ServiceAccount and one egress policy for the pools together.
      expect(servicesOf(chart, "executor")).to.have.length(1);
      const egress = chart.find<INetworkPolicy>("NetworkPolicy", `${release}-testrun-executor-egress`);
      for (const pool of pools)
        expect(selectorMatches(egress?.spec?.podSelector ?? {}, pool.workload.labels)).to.equal(true);
    });

    it("takes a pool's values over the executor's, and the browser image by digest", async () => {
      const digest = `sha256:${"b".repeat(64)}`;
      const chart = await render({
        set: [
          "components.executor.pools.quick.stepKinds=http",
          "components.executor.pools.quick.concurrency=32",
          "components.executor.pools.quick.env.LOG_LEVEL=debug",
          "components.executor.pools.web.stepKinds=browser",
          "components.executor.pools.web.browser.contexts=3",
          `image.browserDigest=${digest}`,
        ],
      });
      const [quick, web] = ["quick", "web"].map((pool) =>
        componentContainers(chart, "executor").find(
          (deployment) => deployment.workload.object.metadata.name === `ci-testrun-executor-${pool}`,
        ),
      );
      expect(quick?.env.values).to.include({
        CONCURRENCY: "32",
        LOG_LEVEL: "debug",
        EXECUTOR_STEP_KINDS: "http",
      });
      // The rest from components.executor.
      expect(web?.env.values).to.include({ CONCURRENCY: "4", BROWSER_CONTEXTS: "3", LOG_LEVEL: "info" });
      expect(web?.container.image).to.equal(`ghcr.io/testrun/testrun-browser:0.1.0@${digest}`);
      expect(quick?.container.image).to.equal("ghcr.io/testrun/testrun:0.1.0");
    });

    it("gives Playwright specs a pool of their own when one lists them: root with the sandbox's capabilities there, nowhere else", async () => {
      const pools = {
        api: { stepKinds: "http" },
        web: { stepKinds: "browser" },
        specs: { stepKinds: "spec", concurrency: 2, specs: { sandbox: true } },
      };
      for (const version of ["1.27.0", "1.31.0"]) {
        const chart = new RenderedChart(
          await renderChart(chartPath, {
            release,
            namespace,
            setJson: [`components.executor.pools=${JSON.stringify(pools)}`],
            kubeVersion: version,
          }),
          namespace,
        );
        const byName = Object.fromEntries(
          componentContainers(chart, "executor").map((pool) => [pool.workload.object.metadata.name, pool]),
        );
        const [api, web, specs] = ["api", "web", "specs"].map(
          (pool) => byName[`ci-testrun-executor-${pool}`],
        );
        if (!api || !web || !specs) throw new Error(`pools rendered: ${Object.keys(byName).join(", ")}`);
        expect(podOf(web).kinds, "the browser pool leaves specs to their own").to.deep.equal(["browser"]);
        expect(podOf(specs)).to.include({ image: "ghcr.io/testrun/testrun-browser:0.1.0", contexts: "2" });
        expect(podOf(specs).kinds).to.deep.equal(["spec"]);
        expect(specs.container.securityContext).to.include({
          runAsNonRoot: false,
          runAsUser: 0,
          allowPrivilegeEscalation: true,
          privileged: false,
          readOnlyRootFilesystem: true,
        });
        expect(specs.container.securityContext?.capabilities).to.deep.equal({
          drop: ["ALL"],
          add: [
            "SYS_ADMIN",
            "NET_ADMIN",
            "SETUID",
            "SETGID",
            "SETPCAP",
            "CHOWN",
            "DAC_OVERRIDE",
            "FOWNER",
            "KILL",
          ],
        });
        // AppArmor's default profile refuses mounts: unconfined by the field from 1.30, the annotation before.
        const { template } = specs.workload.object.spec as {
          template: { metadata: { annotations?: Record<string, string> } };
        };
        const annotation =
          template.metadata.annotations?.["container.apparmor.security.beta.kubernetes.io/executor"];
        const field = (specs.container.securityContext as { appArmorProfile?: { type: string } })
          ?.appArmorProfile;
        if (version === "1.31.0") {
          expect(field, version).to.deep.equal({ type: "Unconfined" });
          expect(annotation, version).to.equal(undefined);
        } else {
          expect(field, version).to.equal(undefined);
          expect(annotation, version).to.equal("unconfined");
        }
        for (const locked of [api, web])
          expect(locked.container.securityContext, locked.workload.object.metadata.name).to.include({
            runAsNonRoot: true,
            runAsUser: 65532,
            allowPrivilegeEscalation: false,
          });
        for (const object of chart.objects) await validateObject(object);
      }
    });

    const refusals = [
      { set: ["components.executor.pools.api.stepKinds=http"], says: "no pool takes browser tests" },
      { set: ["components.executor.stepKinds=ftp"], says: "stepKinds" },
      {
        set: [
          "components.executor.pools.api.stepKinds=http",
          "components.executor.pools.api.specs.sandbox=true",
          "components.executor.pools.web.stepKinds=browser",
        ],
        says: "components.executor.pools.api.specs.sandbox is for executors that take Playwright specs",
      },
      {
        set: [
          "components.executor.pools.api.stepKinds=http",
          "components.executor.pools.web.stepKinds=browser\\,spec",
          "components.executor.pools.web.specs.sandbox=true",
          "components.executor.pools.web.browser.sandbox=true",
        ],
        says: "components.executor.pools.web: specs.sandbox and browser.sandbox on one pool would run hostile specs with the container's seccomp profile Unconfined",
      },
      { set: ["components.executor.stepKinds=browser"], says: "no pool takes http tests" },
      { set: ["components.executor.pools.api.concurrency=2"], says: "stepKinds" },
      { set: ["components.executor.pools.API.stepKinds=all"], says: "API" },
      { set: ["components.executor.browser.contexts=0"], says: "contexts" },
      {
        set: ["components.executor.pools.web.stepKinds=all", "components.executor.pools.web.bogus=1"],
        says: "bogus",
      },
    ];
    for (const { set, says } of refusals) {
      it(`refuses ${set.join(" ")}, saying ${says}`, async () => {
        const result = await tryRenderChart(chartPath, { release, namespace, set });
        expect(result.code, "helm template exit code").to.not.equal(0);
        expect(result.stderr).to.contain(says);
      });
    }
  });

  describe("README.md", () => {
    it("documents every value of values.yaml", () => {
      const values = parse(readFileSync(`${chartPath}/values.yaml`, "utf8")) as Record<string, unknown>;
      const readme = readFileSync(`${chartPath}/README.md`, "utf8");
      // A value is documented when it, or a map it belongs to, is named in backquotes. The
      // components share one table, keyed by what follows components.<name>.
      const documented = (path: string[]) =>
        path.some((_, end) => readme.includes(`\`${path.slice(0, end + 1).join(".")}\``));
      const undocumented = valuePaths(values)
        .map((path) => (path[0] === "components" ? path.slice(2) : path))
        .filter((path) => path.length > 0 && !documented(path))
        .map((path) => path.join("."));
      expect([...new Set(undocumented)], "values missing from helm/testrun/README.md").to.deep.equal([]);
    });
  });
});

/** Every leaf of a values tree as its path of keys; lists and empty maps are leaves. */
function valuePaths(tree: Record<string, unknown>, prefix: string[] = []): string[][] {
  return Object.entries(tree).flatMap(([key, value]) => {
    const path = [...prefix, key];
    const isMap = typeof value === "object" && value !== null && !Array.isArray(value);
    return isMap && Object.keys(value).length > 0
      ? valuePaths(value as Record<string, unknown>, path)
      : [path];
  });
}
