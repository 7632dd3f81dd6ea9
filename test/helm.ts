// Runs the helm binary that `make helm` installs, and turns `helm template` output into objects.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { repoRoot } from "@testrun/testing";
import { parse, parseAllDocuments } from "yaml";
import type { K8sObject } from "./kubernetes.js";

const run = promisify(execFile);

export const helmBinary = `${repoRoot}.tools/bin/helm`;

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs helm and resolves with its exit code and output; a non-zero exit is a result, not an error.
 * `env` is added to this process's environment (KUBECONFIG, for a cluster).
 */
export async function helm(args: readonly string[], env: Record<string, string> = {}): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(helmBinary, args, {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (failed.code === "ENOENT") throw new Error(`${helmBinary} is missing: run \`make helm\``);
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

export interface RenderOptions {
  release: string;
  namespace: string;
  /** Value files, relative to the chart. */
  valueFiles?: readonly string[];
  /** `--set` expressions. */
  set?: readonly string[];
  /** `--set-json` expressions (a map or list in one value). */
  setJson?: readonly string[];
  /** The Kubernetes version rendered for; the oldest the chart supports by default (`kubeVersionArgs`). */
  kubeVersion?: string;
  /** Whether to pass the cluster's ranges the chart requires (`clusterRangesValues`); default true. */
  clusterRanges?: boolean;
}

/** The pod, Service and node ranges the docs' evaluation install passes, as a value file. */
export const clusterRangesValues = `${repoRoot}test/fixtures/chart-cluster-ranges.yaml`;

/**
 * `--kube-version` with the oldest Kubernetes the chart supports (Chart.yaml's `kubeVersion: ">=x.y.z-0"`),
 * for `helm template` and `helm lint`: the chart must work there, and a helm built with `go install`
 * (`make helm`) would otherwise assume Kubernetes 1.20, which `kubeVersion` refuses.
 */
export function kubeVersionArgs(chart: string): string[] {
  const { kubeVersion } = parse(readFileSync(`${chart}/Chart.yaml`, "utf8")) as { kubeVersion?: string };
  const minimum = /^>=\s*v?(\d+\.\d+\.\d+)/.exec(kubeVersion ?? "")?.[1];
  return minimum ? ["--kube-version", minimum] : [];
}

/**
 * `--values` for value files of the chart (relative to it), with the cluster's ranges unless
 * `clusterRanges` is false: after the chart's own values.yaml (the defaults, whose empty ranges
 * would otherwise win again), before any other file, which may set its own.
 */
export function valuesArgs(
  chart: string,
  valueFiles: readonly string[] = [],
  clusterRanges = true,
): string[] {
  const defaults = valueFiles.filter((file) => file === "values.yaml");
  const others = valueFiles.filter((file) => file !== "values.yaml");
  return [
    ...defaults.map((file) => `${chart}/${file}`),
    ...(clusterRanges ? [clusterRangesValues] : []),
    ...others.map((file) => `${chart}/${file}`),
  ].flatMap((file) => ["--values", file]);
}

const renderArgs = (chart: string, options: RenderOptions) => [
  "template",
  options.release,
  chart,
  ...(options.kubeVersion ? ["--kube-version", options.kubeVersion] : kubeVersionArgs(chart)),
  "--namespace",
  options.namespace,
  ...valuesArgs(chart, options.valueFiles, options.clusterRanges !== false),
  ...(options.set ?? []).flatMap((expression) => ["--set", expression]),
  ...(options.setJson ?? []).flatMap((expression) => ["--set-json", expression]),
];

/** `helm template` of the chart, hooks and test pods included; rejects with helm's message when it fails. */
export async function renderChart(chart: string, options: RenderOptions): Promise<K8sObject[]> {
  const result = await helm(renderArgs(chart, options));
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}):\n${result.stderr}`);
  return parseManifests(result.stdout);
}

/** `helm template` that is expected to fail: resolves with the result either way. */
export const tryRenderChart = (chart: string, options: RenderOptions) => helm(renderArgs(chart, options));

/** The objects of a multi-document YAML stream, empty documents left out. */
export function parseManifests(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) throw new Error(`unparsable manifest: ${document.errors[0]?.message}`);
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== "object" || !("kind" in value) || !("apiVersion" in value)) {
      throw new Error(
        `a rendered document is not a Kubernetes object: ${JSON.stringify(value).slice(0, 200)}`,
      );
    }
    objects.push(value as K8sObject);
  }
  return objects;
}
