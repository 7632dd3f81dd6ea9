// A throwaway Kubernetes control plane for a test file (scripts/cluster.sh: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok's fake nodes), and a small client of its API
// with the client certificate the script made. Nothing here builds: `make cluster-tools` (in
// `make test` and .ci/run) has, and without the binaries start() fails saying so.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { repoRoot } from "@testrun/testing";
import { type HelmResult, helm } from "./helm.js";
import type { K8sObject } from "./kubernetes.js";

const run = promisify(execFile);
const script = `${repoRoot}scripts/cluster.sh`;

export interface ApiResponse<T> {
  status: number;
  body: T;
}

/** An object as the API server returns it: with its status. */
export type LiveObject = K8sObject & {
  metadata: K8sObject["metadata"] & { creationTimestamp?: string; generation?: number; uid?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
};

export class Cluster {
  private readonly ca: Buffer;
  private readonly cert: Buffer;
  private readonly key: Buffer;
  readonly server: URL;
  readonly kubeconfig: string;

  private constructor(readonly dir: string) {
    this.ca = readFileSync(`${dir}/pki/ca.crt`);
    this.cert = readFileSync(`${dir}/pki/admin.crt`);
    this.key = readFileSync(`${dir}/pki/admin.key`);
    const env = Object.fromEntries(
      readFileSync(`${dir}/cluster.env`, "utf8")
        .split("\n")
        .filter((line) => line.includes("="))
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    this.server = new URL(env.KUBE_API_SERVER ?? "");
    this.kubeconfig = env.KUBECONFIG ?? "";
  }

  /** Starts a control plane in a fresh directory; rejects with the script's message when it cannot. */
  static async start(): Promise<Cluster> {
    const dir = mkdtempSync(`${tmpdir()}/testrun-cluster-`);
    try {
      await run(script, ["start", dir], { timeout: 180_000 });
    } catch (error) {
      const failed = error as { stderr?: string; message: string };
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`scripts/cluster.sh start failed: ${failed.stderr || failed.message}`);
    }
    return new Cluster(dir);
  }

  /** Stops its processes by their pids and removes its directory. */
  async stop(): Promise<void> {
    await run(script, ["stop", this.dir], { timeout: 60_000 });
  }

  /** helm against this cluster. */
  helm(args: readonly string[]): Promise<HelmResult> {
    return helm(args, { KUBECONFIG: this.kubeconfig });
  }

  /** One API call; any status is a result (the body parsed when it is JSON). */
  call<T = LiveObject>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.server),
        {
          method,
          ca: this.ca,
          cert: this.cert,
          key: this.key,
          headers: {
            accept: "application/json",
            ...(payload ? { "content-type": "application/json" } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as T });
            } catch {
              resolve({ status: res.statusCode ?? 0, body: text as T });
            }
          });
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** GET that must succeed. */
  async get<T = LiveObject>(path: string): Promise<T> {
    const response = await this.call<T>("GET", path);
    if (response.status !== 200)
      throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(response.body).slice(0, 500)}`);
    return response.body;
  }

  /** The items of a list. */
  async list(path: string): Promise<LiveObject[]> {
    return (await this.get<{ items: LiveObject[] }>(path)).items;
  }

  /** POST that must create. */
  async create(path: string, object: unknown): Promise<LiveObject> {
    const response = await this.call("POST", path, object);
    if (response.status !== 201)
      throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(response.body).slice(0, 1000)}`);
    return response.body;
  }

  /** The namespace's Warning events, one line each (what a failed install's message should show). */
  async warnings(namespace: string): Promise<string[]> {
    const events = (await this.list(`/api/v1/namespaces/${namespace}/events`)) as (LiveObject & {
      type?: string;
      reason?: string;
      message?: string;
      involvedObject?: { kind?: string; name?: string };
    })[];
    return events
      .filter((event) => event.type === "Warning")
      .map(
        (event) =>
          `${event.reason} ${event.involvedObject?.kind}/${event.involvedObject?.name}: ${event.message}`,
      );
  }
}

/** Whether the object's condition of that type is True. */
export const conditionTrue = (object: LiveObject, type: string) =>
  object.status?.conditions?.some((condition) => condition.type === type && condition.status === "True") ??
  false;
