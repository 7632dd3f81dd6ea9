// Reading rendered Kubernetes objects the way a cluster would: schema validation (kubernetes-models),
// the environment a container ends up with, which Service a host name reaches, and which pods a set of
// NetworkPolicies lets in. Only what the chart tests need; no cluster involved.
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import type { INetworkPolicyPeer } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer";
import type { INetworkPolicyPort } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort";
import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { ISecret } from "kubernetes-models/v1/Secret";
import type { IService } from "kubernetes-models/v1/Service";
import { isCustomResource, validateCustomResource } from "./crds.js";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export type LabelSelector = NonNullable<INetworkPolicyPeer["podSelector"]>;

export const componentLabel = "app.kubernetes.io/component";

/** The module of kubernetes-models (or a CRD package of the same family) that models an apiVersion. */
const modelModule = (apiVersion: string) =>
  apiVersion.startsWith("gateway.networking.k8s.io/")
    ? `@kubernetes-models/gateway-api/${apiVersion}`
    : `kubernetes-models/${apiVersion}`;

interface ModelClass {
  new (data: unknown): { validate(): void };
  apiVersion?: string;
  kind?: string;
}

/**
 * Validates an object against the JSON schema of its apiVersion and kind; throws on a schema error
 * and on an apiVersion or kind no schema is known for (never skips an object).
 * Note: the Kubernetes schemas do not forbid unknown fields, so a misspelt field is not caught here
 * (but in the custom resources, which test/crds.ts validates strictly).
 */
export async function validateObject(object: K8sObject): Promise<void> {
  // prometheus-operator's and KEDA's kinds: against their CRDs, strictly (test/crds.ts).
  if (isCustomResource(object)) return validateCustomResource(object);
  const what = `${object.apiVersion} ${object.kind} ${object.metadata?.name}`;
  let models: Record<string, unknown>;
  try {
    models = await import(modelModule(object.apiVersion));
  } catch {
    throw new Error(`${what}: no schema known for apiVersion ${object.apiVersion}`);
  }
  const Model = models[object.kind] as ModelClass | undefined;
  if (typeof Model !== "function" || Model.apiVersion !== object.apiVersion || Model.kind !== object.kind) {
    throw new Error(`${what}: no schema known for kind ${object.kind}`);
  }
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`);
  }
}

/** Whether labels satisfy a label selector (matchLabels and matchExpressions). */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string> = {}): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = key in labels;
    const value = labels[key] ?? "";
    const ok =
      operator === "In"
        ? has && values.includes(value)
        : operator === "NotIn"
          ? !has || !values.includes(value)
          : operator === "Exists"
            ? has
            : operator === "DoesNotExist"
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

const selectsEverything = (selector: LabelSelector) =>
  Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;

/** A pod template the chart renders: a Deployment's, a Job's, a bare Pod's. */
export interface Workload {
  object: K8sObject;
  /** The component name for a component's pods, otherwise Kind/name. */
  identity: string;
  labels: Record<string, string>;
  spec: IPodSpec;
}

export const hookEvents = (object: K8sObject): string[] =>
  (object.metadata.annotations?.["helm.sh/hook"] ?? "")
    .split(",")
    .map((event) => event.trim())
    .filter(Boolean);

export const hookWeight = (object: K8sObject) =>
  Number(object.metadata.annotations?.["helm.sh/hook-weight"] ?? 0);

/** The environment a container starts with, as far as the rendered objects tell. */
export interface ContainerEnv {
  values: Record<string, string>;
  /** Variables taken from a Secret key. */
  secretRefs: { variable: string; secret: string; key: string }[];
  /** Secrets handed over whole through envFrom. */
  secretEnvFrom: string[];
  /** References that would keep the container from starting or leave a variable unset. */
  problems: string[];
}

/** The rendered chart, queried the way the cluster would resolve it. */
export class RenderedChart {
  constructor(
    readonly objects: K8sObject[],
    readonly namespace: string,
  ) {}

  ofKind<T = K8sObject>(kind: string): (K8sObject & T)[] {
    return this.objects.filter((object) => object.kind === kind) as (K8sObject & T)[];
  }

  find<T = K8sObject>(kind: string, name: string): (K8sObject & T) | undefined {
    return this.ofKind<T>(kind).find((object) => object.metadata.name === name);
  }

  /** Every pod template, with the identity a NetworkPolicy assertion talks about. */
  workloads(): Workload[] {
    const workloads: Workload[] = [];
    for (const object of this.objects) {
      const spec = object.spec as Record<string, unknown> | undefined;
      const template =
        object.kind === "Pod"
          ? { metadata: object.metadata, spec }
          : object.kind === "CronJob"
            ? ((spec?.jobTemplate as { spec?: { template?: unknown } } | undefined)?.spec?.template as
                | Record<string, unknown>
                | undefined)
            : ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"].includes(object.kind)
              ? (spec?.template as Record<string, unknown> | undefined)
              : undefined;
      if (!template?.spec) continue;
      const labels = (template.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
      const component = labels[componentLabel];
      const isComponent =
        object.kind === "Deployment" && component !== undefined && hookEvents(object).length === 0;
      workloads.push({
        object,
        identity: isComponent ? component : `${object.kind}/${object.metadata.name}`,
        labels,
        spec: template.spec as IPodSpec,
      });
    }
    return workloads;
  }

  /** The Deployment of a component (by its component label), its pod template and its main container. */
  component(name: string): { workload: Workload; container: IContainer } {
    const deployments = this.deployments(name);
    if (deployments.length !== 1)
      throw new Error(`expected one Deployment of component ${name}, found ${deployments.length}`);
    return deployments[0] as { workload: Workload; container: IContainer };
  }

  /** Every Deployment of a component (executor pools are several), each with its main container; at least one. */
  deployments(name: string): { workload: Workload; container: IContainer }[] {
    const matches = this.workloads().filter((workload) => workload.identity === name);
    if (matches.length === 0) throw new Error(`no Deployment of component ${name}`);
    return matches.map((workload) => {
      const containers = workload.spec.containers.filter((container) => container.args?.[0] === name);
      if (containers.length !== 1) {
        throw new Error(
          `Deployment ${workload.object.metadata.name}: expected one container with args ["${name}"]`,
        );
      }
      return { workload, container: containers[0] as IContainer };
    });
  }

  /** Resolves env, envFrom and valueFrom against the rendered ConfigMaps and Secrets. */
  containerEnv(
    container: IContainer,
    secretPlaceholder: (variable: string) => string,
    fieldPlaceholder: (fieldPath: string) => string,
  ): ContainerEnv {
    const result: ContainerEnv = { values: {}, secretRefs: [], secretEnvFrom: [], problems: [] };
    for (const source of container.envFrom ?? []) {
      const prefix = source.prefix ?? "";
      if (source.secretRef) result.secretEnvFrom.push(source.secretRef.name ?? "");
      if (source.configMapRef) {
        const configMap = this.find<IConfigMap>("ConfigMap", source.configMapRef.name ?? "");
        if (!configMap) {
          if (!source.configMapRef.optional)
            result.problems.push(`envFrom ConfigMap ${source.configMapRef.name} is not rendered`);
          continue;
        }
        for (const [key, value] of Object.entries(configMap.data ?? {})) result.values[prefix + key] = value;
      }
    }
    for (const variable of container.env ?? []) {
      const from = variable.valueFrom;
      if (!from) {
        result.values[variable.name] = variable.value ?? "";
      } else if (from.secretKeyRef) {
        const { name = "", key, optional } = from.secretKeyRef;
        result.secretRefs.push({ variable: variable.name, secret: name, key });
        const secret = this.find<ISecret>("Secret", name);
        if (!secret) {
          result.values[variable.name] = secretPlaceholder(variable.name); // an existingSecret
          continue;
        }
        const value =
          secret.stringData?.[key] ??
          (secret.data?.[key] === undefined ? undefined : Buffer.from(secret.data[key], "base64").toString());
        if (value !== undefined) result.values[variable.name] = value;
        else if (!optional) result.problems.push(`${variable.name}: Secret ${name} has no key ${key}`);
      } else if (from.configMapKeyRef) {
        const { name = "", key, optional } = from.configMapKeyRef;
        const value = this.find<IConfigMap>("ConfigMap", name)?.data?.[key];
        if (value !== undefined) result.values[variable.name] = value;
        else if (!optional) result.problems.push(`${variable.name}: ConfigMap ${name} has no key ${key}`);
      } else if (from.fieldRef) {
        result.values[variable.name] = fieldPlaceholder(from.fieldRef.fieldPath);
      } else if (from.resourceFieldRef) {
        result.values[variable.name] = "1";
      }
    }
    return result;
  }

  /** The Service a host name reaches from this namespace (name, name.ns, name.ns.svc[.cluster.local]). */
  serviceForHost(host: string): (K8sObject & IService) | undefined {
    const [name = "", namespace, ...rest] = host.split(".");
    if (namespace !== undefined && namespace !== this.namespace) return undefined;
    const suffix = rest.join(".");
    if (!["", "svc", "svc.cluster.local"].includes(suffix)) return undefined;
    return this.find<IService>("Service", name);
  }

  /** The workloads whose pods a Service sends traffic to. */
  workloadsBehind(service: IService): Workload[] {
    const selector = service.spec?.selector ?? {};
    if (Object.keys(selector).length === 0) return [];
    return this.workloads().filter((workload) => selectorMatches({ matchLabels: selector }, workload.labels));
  }

  /**
   * Who may open connections to a workload's pods on a port under the rendered NetworkPolicies:
   * component names and Kind/name of other rendered workloads, or a description of a wider source
   * ("anywhere", "outside: …", "every pod in the namespace", "unknown pods …").
   */
  ingressSources(target: Workload, port: number): Set<string> {
    const policies = this.ofKind<INetworkPolicy>("NetworkPolicy").filter(
      (policy) =>
        selectorMatches(policy.spec?.podSelector ?? {}, target.labels) &&
        (policy.spec?.policyTypes ?? ["Ingress"]).includes("Ingress"),
    );
    if (policies.length === 0) return new Set(["anywhere (no NetworkPolicy selects these pods)"]);
    const sources = new Set<string>();
    for (const policy of policies) {
      for (const rule of policy.spec?.ingress ?? []) {
        if (!this.portAllowed(rule.ports, target, port)) continue;
        if (!rule.from || rule.from.length === 0) sources.add("anywhere");
        for (const peer of rule.from ?? []) for (const source of this.peerSources(peer)) sources.add(source);
      }
    }
    return sources;
  }

  /** Whether the NetworkPolicies let a workload's pods open connections to another's on a port. */
  egressAllowed(source: Workload, target: Workload, port: number): boolean {
    const policies = this.ofKind<INetworkPolicy>("NetworkPolicy").filter(
      (policy) =>
        selectorMatches(policy.spec?.podSelector ?? {}, source.labels) &&
        (policy.spec?.policyTypes ?? (policy.spec?.egress ? ["Ingress", "Egress"] : ["Ingress"])).includes(
          "Egress",
        ),
    );
    if (policies.length === 0) return true;
    return policies.some((policy) =>
      (policy.spec?.egress ?? []).some(
        (rule) =>
          this.portAllowed(rule.ports, target, port) &&
          (!rule.to ||
            rule.to.length === 0 ||
            rule.to.some(
              (peer) =>
                // The whole world, pods included; with exceptions (the pod ranges, say), not surely them.
                (peer.ipBlock?.cidr === "0.0.0.0/0" && !peer.ipBlock.except?.length) ||
                (!peer.ipBlock &&
                  (!peer.namespaceSelector || this.selectsOwnNamespace(peer.namespaceSelector, false)) &&
                  selectorMatches(peer.podSelector ?? {}, target.labels)),
            )),
      ),
    );
  }

  private portAllowed(ports: INetworkPolicyPort[] | undefined, target: Workload, port: number): boolean {
    if (!ports || ports.length === 0) return true;
    return ports.some((rule) => {
      if ((rule.protocol ?? "TCP") !== "TCP") return false;
      if (rule.port === undefined) return true;
      const start = typeof rule.port === "number" ? rule.port : containerPortNamed(target.spec, rule.port);
      if (start === undefined) return false;
      return port === start || (rule.endPort !== undefined && port >= start && port <= rule.endPort);
    });
  }

  /** Whether a namespaceSelector selects this namespace (and, when `only`, nothing else for sure). */
  private selectsOwnNamespace(selector: LabelSelector, only: boolean): boolean {
    const ownLabels = { "kubernetes.io/metadata.name": this.namespace };
    if (!selectorMatches(selector, ownLabels)) return false;
    if (!only) return true;
    const byName = selector.matchLabels?.["kubernetes.io/metadata.name"] === this.namespace;
    const byExpression = (selector.matchExpressions ?? []).some(
      (e) => e.key === "kubernetes.io/metadata.name" && e.operator === "In" && e.values?.length === 1,
    );
    return byName || byExpression;
  }

  private peerSources(peer: INetworkPolicyPeer): string[] {
    if (peer.ipBlock) return [`outside: ipBlock ${peer.ipBlock.cidr}`];
    if (peer.namespaceSelector && !this.selectsOwnNamespace(peer.namespaceSelector, true)) {
      return [`outside: namespaceSelector ${JSON.stringify(peer.namespaceSelector)}`];
    }
    const podSelector = peer.podSelector ?? {};
    if (selectsEverything(podSelector)) return ["every pod in the namespace"];
    const matched = this.workloads()
      .filter((workload) => selectorMatches(podSelector, workload.labels))
      .map((workload) => workload.identity);
    return matched.length > 0 ? matched : [`unknown pods ${JSON.stringify(podSelector)}`];
  }
}

/** The number of a named container port in a pod. */
export function containerPortNamed(spec: IPodSpec, name: string): number | undefined {
  for (const container of spec.containers) {
    const port = container.ports?.find((candidate) => candidate.name === name);
    if (port) return port.containerPort;
  }
  return undefined;
}

/** A probe's or Service's port (number or container port name) as a number, in a container. */
export function resolvePort(container: IContainer, port: number | string | undefined): number | undefined {
  if (typeof port === "number" || port === undefined) return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((candidate) => candidate.name === port)?.containerPort;
}
