// The chart sent to a real Kubernetes API server (scripts/cluster.sh: kube-apiserver v1.33 with etcd,
// the controller manager and the scheduler, kwok playing the kubelets of three nodes), installed the
// way docs/deploy.md tells an operator to: what only a cluster catches. Admission (Pod Security
// "restricted" on the namespace, "privileged" for the pool that runs Playwright specs as root; the
// API server's validation and defaulting, the CRDs' schemas and CEL rules), hook order (the
// migration Job before the release's objects, and completed), `--wait` (every Deployment
// Available), what the controllers make of the objects (a PodDisruptionBudget that allows an
// eviction, HPAs that find their Deployment), and upgrades from the previous chart (an immutable
// field changed fails them) and rollbacks. kwok runs no image: pods become Running and Ready, Jobs'
// and `helm test`'s pods succeed, NetworkPolicies are stored, not enforced.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { eventually, repoRoot } from "@testrun/testing";
import { expect } from "chai";
import { parse, stringify } from "yaml";
import { Cluster, conditionTrue, type LiveObject } from "./cluster.js";
import { customResourceDefinitions } from "./crds.js";
import { clusterRangesValues, parseManifests, valuesArgs } from "./helm.js";

const chart = `${repoRoot}helm/testrun`;
/**
 * The chart operators have installed, which the current one must upgrade: as of the last commit
 * before this wave's chart changes (2026-11-27: metrics, monitoring and the automation service in).
 */
const previousChartCommit = "10d2840";
const timeout = ["--timeout", "3m"];

/** What a values file needs beside it: the Secret docs/deploy.md has the operator create first. */
interface Install {
  valueFile: string;
  existingSecret?: string;
}
const installs: Install[] = [
  { valueFile: "values.yaml" },
  { valueFile: "examples/minimal.yaml", existingSecret: "testrun-secrets" },
  { valueFile: "examples/monitoring.yaml" },
  { valueFile: "examples/production.yaml", existingSecret: "testrun-secrets" },
];

/**
 * The Secret as examples/production.yaml's header tells the operator to create it: its keys, each
 * with a placeholder (no process reads them here), so that a key the chart wants and the header
 * leaves out fails the install as it would the operator's.
 */
const secretKeys = [
  ...readFileSync(`${chart}/examples/production.yaml`, "utf8").matchAll(/--from-literal=([A-Z0-9_]+)=/g),
].map((match) => match[1] as string);
const secretData = Object.fromEntries(
  secretKeys.map((key) => [
    key,
    Buffer.from(`placeholder-${key.toLowerCase()}`.padEnd(48, "x")).toString("base64"),
  ]),
);

const slug = (valueFile: string) => valueFile.replace(/^examples\//, "").replace(/\.yaml$/, "");

describe("the chart on a Kubernetes API server with kwok nodes", function () {
  this.timeout(240_000);
  let cluster: Cluster | undefined;
  let previousChart = "";
  let previousRanges = "";
  /** `--values` for the previous chart: as valuesArgs does for today's, with that chart's ranges. */
  const previousValuesArgs = (valueFile: string) =>
    (valueFile === "values.yaml"
      ? [`${previousChart}/values.yaml`, previousRanges]
      : [previousRanges, `${previousChart}/${valueFile}`]
    ).flatMap((file) => ["--values", file]);
  const api = () => {
    if (!cluster) throw new Error("the cluster did not start");
    return cluster;
  };
  /**
   * Each values file's upgrade from the previous chart, rollback and upgrade again (upgradeAndRollBack),
   * by values file: started together at the end of `before`, each in its own namespace, and awaited
   * by its test. They wait on helm's `--wait` (which polls every 2 s) and the controllers, not on
   * CPU: one after another they took some 100 s of the file's 2.5 minutes.
   */
  const upgrades = new Map<string, Promise<void>>();

  before(async function () {
    this.timeout(300_000);
    cluster = await Cluster.start();
    // The CRDs of prometheus-operator and KEDA, as a cluster running them has (examples/monitoring.yaml).
    const crds = await customResourceDefinitions();
    for (const crd of crds)
      await cluster.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    for (const crd of crds)
      await eventually(
        async () => {
          const live = await api().get(
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
          );
          return conditionTrue(live, "Established") || undefined;
        },
        `CRD ${crd.metadata.name} established`,
        30_000,
      );
    // Volumes for the in-chart PostgreSQL's claims, as a cluster without a default StorageClass has
    // them made by hand (no kubelet mounts them: they only let the claims bind and the pods schedule).
    for (let index = 0; index < 12; index++)
      await cluster.create("/api/v1/persistentvolumes", {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name: `volume-${index}` },
        spec: {
          capacity: { storage: "20Gi" },
          accessModes: ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Retain",
          hostPath: { path: `/var/lib/volume-${index}` },
        },
      });
    // The previous chart, from git.
    previousChart = mkdtempSync(`${tmpdir()}/testrun-previous-chart-`);
    execFileSync(
      "sh",
      ["-c", `git archive ${previousChartCommit} helm/testrun | tar -x -C "${previousChart}"`],
      { cwd: repoRoot },
    );
    previousChart = `${previousChart}/helm/testrun`;
    // The cluster's ranges as that chart took them: the keys of today's it knows.
    const previousEgress = Object.keys(
      (parse(readFileSync(`${previousChart}/values.yaml`, "utf8")) as { egress: object }).egress,
    );
    const { egress } = parse(readFileSync(clusterRangesValues, "utf8")) as {
      egress: Record<string, unknown>;
    };
    previousRanges = `${previousChart}/ranges.yaml`;
    writeFileSync(
      previousRanges,
      stringify({
        egress: Object.fromEntries(Object.entries(egress).filter(([key]) => previousEgress.includes(key))),
      }),
    );
    for (const install of installs) {
      const upgrade = upgradeAndRollBack(install);
      // Its test reports its failure; until the test awaits it, the rejection is not unhandled.
      upgrade.catch(() => {});
      upgrades.set(install.valueFile, upgrade);
    }
  });

  after(async () => {
    // A flow still running (its test timed out) would otherwise lose its cluster halfway.
    await Promise.allSettled(upgrades.values());
    await cluster?.stop();
    if (previousChart)
      rmSync(previousChart.replace(/\/helm\/testrun$/, ""), { recursive: true, force: true });
  });

  /** A namespace enforcing Pod Security "restricted" (latest), with the Secret the values file needs. */
  async function namespace(name: string, install: Install): Promise<string> {
    await api().create("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name,
        labels: {
          "pod-security.kubernetes.io/enforce": "restricted",
          "pod-security.kubernetes.io/enforce-version": "latest",
        },
      },
    });
    if (install.existingSecret)
      await api().create(`/api/v1/namespaces/${name}/secrets`, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: install.existingSecret },
        data: secretData,
      });
    return name;
  }

  /** helm that must succeed; its failure message carries the namespace's Warning events. */
  async function helmOk(args: string[], namespaceName: string): Promise<string> {
    const result = await api().helm([...args, "--namespace", namespaceName]);
    if (result.code !== 0) {
      const warnings = await api().warnings(namespaceName);
      throw new Error(
        `helm ${args.slice(0, 2).join(" ")} failed (${result.code}):\n${result.stderr}\nWarning events:\n${warnings.join("\n")}`,
      );
    }
    return result.stdout;
  }

  /** The release's objects of one kind, from its stored manifest. */
  async function releaseObjects(release: string, namespaceName: string, kind: string) {
    const manifest = await helmOk(["get", "manifest", release], namespaceName);
    return parseManifests(manifest).filter((object) => object.kind === kind);
  }

  /**
   * Every Deployment of the release Available, its rollout finished (all replicas updated and
   * ready), none lacking, and every pod Running and Ready. Polled: `helm --wait` returns once a
   * Deployment's new ReplicaSet has replicas minus maxUnavailable ready, which during an upgrade is
   * before the old pods are gone.
   */
  async function expectDeploymentsAvailable(release: string, namespaceName: string) {
    const expected = (await releaseObjects(release, namespaceName, "Deployment"))
      .map((object) => object.metadata.name)
      .sort();
    expect(expected, "the release's Deployments").to.not.be.empty;
    const rolledOut = (deployment: LiveObject) => {
      const status = deployment.status as {
        observedGeneration?: number;
        replicas?: number;
        readyReplicas?: number;
        updatedReplicas?: number;
      };
      return (
        conditionTrue(deployment, "Available") &&
        status.observedGeneration === deployment.metadata.generation &&
        status.readyReplicas === status.replicas &&
        status.updatedReplicas === status.replicas
      );
    };
    const deployments = await eventually(
      async () => {
        const live = await api().list(`/apis/apps/v1/namespaces/${namespaceName}/deployments`);
        return live.every(rolledOut) ? live : undefined;
      },
      `every Deployment in ${namespaceName} rolled out and Available`,
      60_000,
    );
    expect(deployments.map((deployment) => deployment.metadata.name).sort()).to.deep.equal(expected);
    const pods = await api().list(`/api/v1/namespaces/${namespaceName}/pods`);
    for (const pod of pods.filter((candidate) => candidate.status?.phase !== "Succeeded")) {
      expect(pod.status?.phase, `${pod.metadata.name} phase`).to.equal("Running");
      expect(conditionTrue(pod, "Ready"), `${pod.metadata.name} Ready`).to.equal(true);
    }
  }

  /**
   * The chart of previousChartCommit installed with the values file (in a namespace of its own),
   * upgraded to today's with `--wait`, rolled back and upgraded again: every Deployment rolled out
   * after each, and the history as the rollback leaves it.
   */
  async function upgradeAndRollBack(install: Install): Promise<void> {
    const release = "testrun";
    const values = valuesArgs(chart, [install.valueFile]);
    const upgraded = await namespace(`upgrade-${slug(install.valueFile)}`, install);
    await helmOk(
      ["install", release, previousChart, ...previousValuesArgs(install.valueFile), "--wait", ...timeout],
      upgraded,
    );
    await helmOk(["upgrade", release, chart, ...values, "--wait", ...timeout], upgraded);
    await expectDeploymentsAvailable(release, upgraded);
    await helmOk(["rollback", release, "1", "--wait", ...timeout], upgraded);
    await expectDeploymentsAvailable(release, upgraded);
    const history = JSON.parse(await helmOk(["history", release, "--output", "json"], upgraded)) as {
      revision: number;
      status: string;
    }[];
    expect(history.map((entry) => [entry.revision, entry.status])).to.deep.equal([
      [1, "superseded"],
      [2, "superseded"],
      [3, "deployed"],
    ]);
    // And forward again, over the rollback.
    await helmOk(["upgrade", release, chart, ...values, "--wait", ...timeout], upgraded);
    await expectDeploymentsAvailable(release, upgraded);
  }

  for (const install of installs) {
    describe(`with ${install.valueFile}`, () => {
      const release = "testrun";
      const values = valuesArgs(chart, [install.valueFile]);
      let namespaceName = "";

      it("installs with --wait under Pod Security restricted: the migration hook first and completed, every Deployment Available, helm test passing", async () => {
        namespaceName = await namespace(`testrun-${slug(install.valueFile)}`, install);
        await helmOk(["install", release, chart, ...values, "--wait", ...timeout], namespaceName);

        // The migration Job ran as a pre-install hook and succeeded before the release's objects were made.
        const status = JSON.parse(await helmOk(["status", release, "--output", "json"], namespaceName)) as {
          info: { status: string };
          hooks?: {
            kind: string;
            name: string;
            events: string[];
            last_run: { phase: string; completed_at: string };
          }[];
        };
        expect(status.info.status).to.equal("deployed");
        const migration = status.hooks?.find((hook) => hook.kind === "Job");
        expect(migration?.name, "the migration hook").to.match(/-migrate$/);
        expect(migration?.events).to.include("pre-install");
        expect(migration?.last_run.phase, "the migration Job's run").to.equal("Succeeded");
        const migrated = Math.floor(Date.parse(migration?.last_run.completed_at ?? "") / 1000) * 1000;
        const deployments = await api().list(`/apis/apps/v1/namespaces/${namespaceName}/deployments`);
        for (const deployment of deployments)
          expect(
            Date.parse(deployment.metadata.creationTimestamp ?? ""),
            `${deployment.metadata.name} created after the migration completed`,
          ).to.be.at.least(migrated);

        await expectDeploymentsAvailable(release, namespaceName);
        // Admission refused no pod (a ReplicaSet or Job refused by Pod Security says FailedCreate).
        const refused = (await api().warnings(namespaceName)).filter((line) =>
          line.startsWith("FailedCreate"),
        );
        expect(refused, "pods refused").to.deep.equal([]);

        const test = await api().helm(["test", release, "--namespace", namespaceName, ...timeout]);
        expect(test.code, `helm test: ${test.stderr}`).to.equal(0);
        expect(test.stdout).to.match(/Phase:\s+Succeeded/);
      });

      it("keeps PodDisruptionBudgets that allow an eviction and HPAs that find what they scale", async () => {
        const budgets = await releaseObjects(release, namespaceName, "PodDisruptionBudget");
        for (const budget of budgets) {
          const allowed = await eventually(
            async () => {
              const live = await api().get(
                `/apis/policy/v1/namespaces/${namespaceName}/poddisruptionbudgets/${budget.metadata.name}`,
              );
              const status = live.status as { observedGeneration?: number; disruptionsAllowed?: number };
              return status.observedGeneration === live.metadata.generation &&
                (status.disruptionsAllowed ?? 0) >= 1
                ? status.disruptionsAllowed
                : undefined;
            },
            `${budget.metadata.name} allowing a disruption`,
            60_000,
          );
          expect(allowed).to.be.at.least(1);
        }
        const autoscalers = await releaseObjects(release, namespaceName, "HorizontalPodAutoscaler");
        for (const autoscaler of autoscalers) {
          const live = await eventually(
            async () => {
              const object = await api().get(
                `/apis/autoscaling/v2/namespaces/${namespaceName}/horizontalpodautoscalers/${autoscaler.metadata.name}`,
              );
              return object.status?.conditions?.some((condition) => condition.type === "AbleToScale")
                ? object
                : undefined;
            },
            `${autoscaler.metadata.name}'s AbleToScale condition`,
            60_000,
          );
          expect(
            conditionTrue(live, "AbleToScale"),
            `${autoscaler.metadata.name} finds its Deployment`,
          ).to.equal(true);
        }
        if (install.valueFile === "examples/production.yaml") {
          expect(budgets, "production's budgets").to.not.be.empty;
          expect(autoscalers, "production's autoscalers").to.not.be.empty;
        }
      });

      it(`upgrades with --wait from the chart of ${previousChartCommit}, and rolls back`, async () => {
        const upgrade = upgrades.get(install.valueFile);
        if (!upgrade) throw new Error(`no upgrade started for ${install.valueFile}`);
        await upgrade;
      });
    });
  }

  it("fails the upgrade of a chart that changes an immutable field (a Deployment's selector)", async () => {
    const install = installs[0] as Install;
    const namespaceName = await namespace("immutable", install);
    const values = valuesArgs(chart, [install.valueFile]);
    await helmOk(["install", "testrun", chart, ...values, "--wait", ...timeout], namespaceName);
    const changed = mkdtempSync(`${tmpdir()}/testrun-changed-chart-`);
    try {
      cpSync(chart, changed, { recursive: true });
      const helpers = `${changed}/templates/_helpers.tpl`;
      const text = readFileSync(helpers, "utf8");
      const selector = "app.kubernetes.io/component: {{ .name }}\n{{- end -}}";
      expect(text, "the selector labels' template").to.contain(selector);
      writeFileSync(
        helpers,
        text.replace(
          selector,
          "app.kubernetes.io/component: {{ .name }}\ntestrun.dev/track: stable\n{{- end -}}",
        ),
      );
      const result = await api().helm([
        "upgrade",
        "testrun",
        changed,
        ...valuesArgs(changed, [install.valueFile]),
        "--namespace",
        namespaceName,
        "--wait",
        ...timeout,
      ]);
      expect(result.code, "the upgrade's exit code").to.not.equal(0);
      expect(result.stderr).to.match(/field is immutable/);
    } finally {
      rmSync(changed, { recursive: true, force: true });
    }
  });

  it("runs a pool with specs.sandbox only where Pod Security enforces privileged: restricted refuses its pods alone, saying why; privileged admits them as rendered, AppArmor unconfined", async () => {
    // examples/minimal.yaml: no PostgreSQL or Redis of the release's own to wait for.
    const install = installs[1] as Install;
    const release = "testrun";
    const pools = {
      http: { stepKinds: "http" },
      browser: { stepKinds: "browser" },
      specs: { stepKinds: "spec", specs: { sandbox: true } },
    };
    const namespaceName = await namespace("spec-sandbox", install);
    const podsOf = async (pool: string) =>
      api().list(
        `/api/v1/namespaces/${namespaceName}/pods?labelSelector=${encodeURIComponent(`testrun/executor-pool=${pool}`)}`,
      );
    // What Pod Security "restricted" says of the spec pool's container (docs/deploy.md, "Playwright specs").
    const violations = [
      "restricted:latest",
      "forbidden AppArmor profile",
      "allowPrivilegeEscalation != false",
      "unrestricted capabilities",
      "SYS_ADMIN",
      "runAsNonRoot != true",
      "runAsUser=0",
    ];

    // Without --wait: the spec pool never becomes Available here, and helm's --wait would only say
    // "context deadline exceeded" at its timeout. The API server warns of the Deployment at once.
    const installed = await api().helm([
      "install",
      release,
      chart,
      ...valuesArgs(chart, [install.valueFile]),
      "--set-json",
      `components.executor.pools=${JSON.stringify(pools)}`,
      "--namespace",
      namespaceName,
      ...timeout,
    ]);
    expect(installed.code, `helm install: ${installed.stderr}`).to.equal(0);
    expect(installed.stderr).to.contain("would violate PodSecurity");
    for (const violation of violations) expect(installed.stderr, "helm's warning").to.contain(violation);

    // The spec pool's ReplicaSet cannot make a pod, and its events say why; the other pools' pods run.
    const refusals = async () =>
      (await api().warnings(namespaceName)).filter((line) => line.startsWith("FailedCreate"));
    await eventually(
      async () => ((await refusals()).length > 0 ? true : undefined),
      `a pod refused in ${namespaceName}`,
      60_000,
    );
    for (const pool of ["http", "browser"])
      await eventually(
        async () => ((await podsOf(pool)).some((pod) => pod.status?.phase === "Running") ? true : undefined),
        `the ${pool} pool's pod running in ${namespaceName}`,
        60_000,
      );
    expect(await podsOf("specs"), "the spec pool's pods").to.deep.equal([]);
    for (const refusal of await refusals()) {
      expect(refusal).to.match(/^FailedCreate ReplicaSet\/testrun-executor-specs-[a-z0-9]+: /);
      expect(refusal).to.contain('is forbidden: violates PodSecurity "restricted:latest"');
      for (const violation of violations) expect(refusal, "the ReplicaSet's event").to.contain(violation);
    }

    // The namespace enforcing privileged instead: the ReplicaSet's next try makes the pod, and the
    // release rolls out.
    const live = await api().get(`/api/v1/namespaces/${namespaceName}`);
    const relabelled = await api().call("PUT", `/api/v1/namespaces/${namespaceName}`, {
      ...live,
      metadata: {
        ...live.metadata,
        labels: { ...live.metadata.labels, "pod-security.kubernetes.io/enforce": "privileged" },
      },
    });
    expect(relabelled.status, JSON.stringify(relabelled.body).slice(0, 500)).to.equal(200);
    await expectDeploymentsAvailable(release, namespaceName);

    // The API server kept the container's securityContext as rendered: root, the sandbox's
    // capabilities, and the appArmorProfile field it validates (Kubernetes >= 1.30).
    type Container = { name: string; securityContext?: { capabilities?: { add?: string[] } } };
    const firstContainer = (podSpec: unknown) =>
      (podSpec as { containers: Container[] } | undefined)?.containers[0];
    const deployment = (await releaseObjects(release, namespaceName, "Deployment")).find(
      (object) => object.metadata.name === "testrun-executor-specs",
    );
    const rendered = firstContainer((deployment?.spec as { template?: { spec?: unknown } })?.template?.spec);
    const [pod] = await podsOf("specs");
    const stored = firstContainer(pod?.spec);
    expect(stored?.name, "the spec pool's stored container").to.equal("executor");
    expect(stored?.securityContext).to.deep.include({
      runAsNonRoot: false,
      runAsUser: 0,
      allowPrivilegeEscalation: true,
      appArmorProfile: { type: "Unconfined" },
    });
    expect(stored?.securityContext?.capabilities?.add).to.include("SYS_ADMIN");
    expect(stored?.securityContext, "as rendered").to.deep.equal(rendered?.securityContext);
  });
});
