// The CustomResourceDefinitions the chart renders objects of (prometheus-operator's ServiceMonitor,
// PodMonitor and PrometheusRule, KEDA's ScaledObject), taken offline from their Go module zips with
// `go mod download` (Go's module cache keeps them), and validation against their openAPIV3Schema
// made strict the way the API server's strict field validation is: an unknown field is an error.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { Ajv, type ValidateFunction } from "ajv";
import { parse } from "yaml";
import type { K8sObject } from "./kubernetes.js";

const run = promisify(execFile);

/** Where each custom resource's CRD is: a Go module at a version, and the file inside it. */
const crdSources: Record<string, { module: string; file: string }> = {
  "monitoring.coreos.com/v1 ServiceMonitor": {
    module: "github.com/prometheus-operator/prometheus-operator@v0.85.0",
    file: "example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml",
  },
  "monitoring.coreos.com/v1 PodMonitor": {
    module: "github.com/prometheus-operator/prometheus-operator@v0.85.0",
    file: "example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml",
  },
  "monitoring.coreos.com/v1 PrometheusRule": {
    module: "github.com/prometheus-operator/prometheus-operator@v0.85.0",
    file: "example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml",
  },
  "keda.sh/v1alpha1 ScaledObject": {
    module: "github.com/kedacore/keda/v2@v2.21.0",
    file: "config/crd/bases/keda.sh_scaledobjects.yaml",
  },
};

/** The API groups whose objects are custom resources validated here. */
export const customResourceGroups = ["monitoring.coreos.com", "keda.sh"];

export const isCustomResource = (object: Pick<K8sObject, "apiVersion">) =>
  customResourceGroups.includes(object.apiVersion.split("/")[0] ?? "");

const moduleDirs = new Map<string, Promise<string>>();

/** The module's directory in Go's module cache, downloaded the first time (GOFLAGS and GOTOOLCHAIN as `make helm`). */
function moduleDir(module: string): Promise<string> {
  let dir = moduleDirs.get(module);
  if (!dir) {
    dir = run("go", ["mod", "download", "-json", module], {
      cwd: tmpdir(),
      env: { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "auto" },
      maxBuffer: 1024 * 1024,
    }).then(
      ({ stdout }) => {
        const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
        if (!info.Dir) throw new Error(`go mod download ${module}: ${info.Error ?? "no Dir"}`);
        return info.Dir;
      },
      (error: Error & { code?: unknown; stdout?: string }) => {
        if (error.code === "ENOENT") throw new Error("go is missing: run scripts/install-prerequisites.sh");
        throw new Error(`go mod download ${module} failed: ${error.stdout ?? ""}${error.message}`);
      },
    );
    moduleDirs.set(module, dir);
  }
  return dir;
}

type Schema = Record<string, unknown>;

/**
 * An openAPIV3Schema as a JSON schema that refuses unknown fields: every object with `properties`
 * gets additionalProperties false unless it says otherwise (or preserves unknown fields), and the
 * Kubernetes extensions (x-kubernetes-*) go, after int-or-string has become its anyOf.
 */
export function strictSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictSchema);
  if (node === null || typeof node !== "object") return node;
  const source = node as Schema;
  const result: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key.startsWith("x-kubernetes-")) continue;
    // A Go pattern made case-insensitive by (?i), which JavaScript has no syntax for: each letter
    // becomes a class of both cases (the patterns with it are plain letters and groups).
    if (key === "pattern" && typeof value === "string" && value.startsWith("^(?i)")) {
      result[key] =
        `^${value.slice(5).replace(/[a-z]/gi, (letter) => `[${letter.toLowerCase()}${letter.toUpperCase()}]`)}`;
      continue;
    }
    result[key] =
      key === "properties" || key === "patternProperties"
        ? Object.fromEntries(
            Object.entries(value as Schema).map(([name, child]) => [name, strictSchema(child)]),
          )
        : strictSchema(value);
  }
  if (source["x-kubernetes-int-or-string"] === true && !("anyOf" in source))
    result.anyOf = [{ type: "integer" }, { type: "string" }];
  if (
    "properties" in source &&
    !("additionalProperties" in source) &&
    source["x-kubernetes-preserve-unknown-fields"] !== true
  )
    result.additionalProperties = false;
  return result;
}

const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
const int32 = {
  type: "number" as const,
  validate: (value: number) => Number.isInteger(value) && Math.abs(value) < 2 ** 31,
};
ajv.addFormat("int32", int32);
ajv.addFormat("int64", { type: "number", validate: (value: number) => Number.isInteger(value) });
ajv.addFormat("date-time", { type: "string", validate: (value: string) => !Number.isNaN(Date.parse(value)) });

const validators = new Map<string, Promise<ValidateFunction>>();

/** The strict validator of one kind at one apiVersion, from its CRD's served version. */
function validatorOf(apiVersion: string, kind: string): Promise<ValidateFunction> {
  const key = `${apiVersion} ${kind}`;
  let validator = validators.get(key);
  if (!validator) {
    const source = crdSources[key];
    if (!source) throw new Error(`${key}: no CRD known (test/crds.ts)`);
    validator = moduleDir(source.module).then((dir) => {
      const crd = parse(readFileSync(`${dir}/${source.file}`, "utf8")) as {
        spec: {
          group: string;
          names: { kind: string };
          versions: { name: string; served: boolean; schema: { openAPIV3Schema: Schema } }[];
        };
      };
      const version = crd.spec.versions.find(
        (candidate) => `${crd.spec.group}/${candidate.name}` === apiVersion,
      );
      if (crd.spec.names.kind !== kind || !version?.served)
        throw new Error(`${source.file} serves no ${kind} at ${apiVersion}`);
      return ajv.compile(strictSchema(version.schema.openAPIV3Schema) as Schema);
    });
    validators.set(key, validator);
  }
  return validator;
}

/** Throws with every schema error of a custom resource against its CRD, or when no CRD is known. */
export async function validateCustomResource(object: K8sObject): Promise<void> {
  const what = `${object.apiVersion} ${object.kind} ${object.metadata?.name}`;
  const validate = await validatorOf(object.apiVersion, object.kind);
  if (!validate(object as unknown))
    throw new Error(`${what}: ${ajv.errorsText(validate.errors, { dataVar: object.kind })}`);
}

/**
 * Every CRD of crdSources, each once, as its file in the module zip has it: what a cluster that runs
 * prometheus-operator and KEDA has installed (test/chart-cluster.e2e.test.ts sends them to an API server).
 */
export async function customResourceDefinitions(): Promise<K8sObject[]> {
  const files = new Map(
    Object.values(crdSources).map((source) => [`${source.module}/${source.file}`, source]),
  );
  return Promise.all(
    [...files.values()].map(
      async (source) =>
        parse(readFileSync(`${await moduleDir(source.module)}/${source.file}`, "utf8")) as K8sObject,
    ),
  );
}
