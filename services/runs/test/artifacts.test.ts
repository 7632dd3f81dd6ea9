import { randomBytes } from "node:crypto";
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import {
  ArtifactKind,
  type PutArtifactRequest,
  PutArtifactRequestSchema,
  RunStatus,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { serviceReadMaxBytes } from "@testrun/kit";
import {
  apiKey,
  eventually,
  httpStep,
  type InProcessRunsStack,
  leaseOf,
  member,
  operator,
  type RunsProject,
  rejects,
  repoRoot,
  seedOrganization,
  seedRunsProject,
  sharedMinio,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";

const MiB = 1024 * 1024;

/** What a test can ask of the store behind the runs service: which artifact bytes it holds. */
interface Backend {
  name: "postgres" | "s3";
  /** The runs service's settings for it. */
  env: Record<string, string>;
  /** The keys of the artifacts whose bytes it holds under `prefix` (`<project>/<run>/`). */
  keys(stack: InProcessRunsStack, prefix: string): Promise<string[]>;
  stop(): Promise<void>;
}

const postgresBackend = async (): Promise<Backend> => ({
  name: "postgres",
  env: {},
  async keys(stack, prefix) {
    const rows = await stack.db.query<{ key: string }>(
      "select key from runs.artifact_contents where starts_with(key, $1) order by key",
      [prefix],
    );
    return rows.rows.map((row) => row.key);
  },
  async stop() {},
});

/** A bucket of its own on the test process's MinIO, the objects under a prefix as a shared bucket would have them. */
const s3Backend = async (): Promise<Backend> => {
  const minio = await sharedMinio();
  const bucket = `artifacts-${randomBytes(4).toString("hex")}`;
  const prefix = "testrun/";
  const client = new S3Client({
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    name: "s3",
    env: {
      ARTIFACT_STORE: "s3",
      ARTIFACT_S3_BUCKET: bucket,
      ARTIFACT_S3_PREFIX: prefix,
      ARTIFACT_S3_ENDPOINT: minio.endpoint,
      ARTIFACT_S3_REGION: minio.region,
      ARTIFACT_S3_FORCE_PATH_STYLE: "true",
      ARTIFACT_S3_ACCESS_KEY_ID: minio.accessKeyId,
      ARTIFACT_S3_SECRET_ACCESS_KEY: minio.secretAccessKey,
    },
    async keys(_stack, keyPrefix) {
      const listed = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}${keyPrefix}` }),
      );
      return (listed.Contents ?? []).map((object) => String(object.Key).slice(prefix.length)).sort();
    },
    async stop() {
      client.destroy();
    },
  };
};

/** A PNG's signature and some bytes: what an executor's screenshot looks like to the store. */
const png = (size = 1024) => {
  const bytes = randomBytes(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].slice(0, size));
  return new Uint8Array(bytes);
};

for (const makeBackend of [postgresBackend, s3Backend]) {
  describe(`artifacts in the ${makeBackend === postgresBackend ? "PostgreSQL" : "S3 (MinIO)"} store`, () => {
    let backend: Backend;
    let stack: InProcessRunsStack;
    let project: RunsProject;
    /** A test case of three steps, so that step numbers have room. */
    let threeSteps: string;

    before(async function () {
      // Four processes, their migrations and (the first time) MinIO.
      this.timeout(120_000);
      backend = await makeBackend();
      stack = await startInProcessRunsStack({
        ...backend.env,
        // The caps, small enough to reach in a test: 20 MiB per artifact is the default.
        RUN_ARTIFACTS_MAX_BYTES: String(30 * MiB),
        TEST_ARTIFACTS_MAX_COUNT: "3",
        ARTIFACT_SWEEP_INTERVAL_MS: "100",
      });
    });
    beforeEach(async () => {
      project = await seedRunsProject(stack);
      const { testCase } = await stack.catalog.catalog.createTestCase({
        actor: operator(),
        projectId: project.projectId,
        name: "three steps",
        tags: ["three"],
        enabled: true,
        steps: [httpStep("/a"), httpStep("/b"), httpStep("/c")],
      });
      threeSteps = testCase?.id ?? "";
    });
    after(async () => {
      await stack?.stop();
      await backend?.stop();
    });

    /** Starts a run of the three-step test case and claims its test. */
    const claimed = async (extra: { recordTraces?: boolean } = {}) => {
      const { run } = await stack.runs.startRun({
        actor: project.key,
        projectId: project.projectId,
        selection: { case: "testCaseIds", value: { ids: [threeSteps] } },
        ...extra,
      });
      const testResultId = run?.tests[0]?.id ?? "";
      const { assignment } = await stack.executor.claimTest({ testResultId, executorId: "pod-a/0" });
      return { runId: run?.id ?? "", testResultId, assignment, prefix: `${project.projectId}/${run?.id}/` };
    };

    const put = (
      claim: { assignment?: Parameters<typeof leaseOf>[0] },
      fields: Partial<PutArtifactRequest> = {},
    ) =>
      stack.executor.putArtifact({
        ...leaseOf(claim.assignment),
        kind: ArtifactKind.SCREENSHOT,
        name: "failure",
        contentType: "image/png",
        content: png(),
        step: 2,
        ...fields,
      });

    const rowsOf = async (testResultId: string) =>
      (
        await stack.db.query<{ id: string; state: string }>(
          "select id, state from runs.artifacts where test_result_id = $1 order by created_at",
          [testResultId],
        )
      ).rows;

    it("stores an artifact under the claim, shows it with the final result, and serves it to readers of the project only", async () => {
      const claim = await claimed();
      const content = png(4096);
      const { artifact } = await put(claim, { content });
      expect(artifact?.id).to.match(/^art_[0-9a-z]{26}$/);
      expect(artifact).to.deep.include({
        kind: ArtifactKind.SCREENSHOT,
        name: "failure",
        contentType: "image/png",
        sizeBytes: 4096n,
        step: 2,
        testResultId: claim.testResultId,
        runId: claim.runId,
      });
      const trace = await put(claim, {
        kind: ArtifactKind.TRACE,
        name: "trace",
        contentType: "application/zip",
        step: 0,
        content: new Uint8Array(randomBytes(2000)),
      });
      expect(await backend.keys(stack, claim.prefix)).to.deep.equal(
        [artifact?.id, trace.artifact?.id].map((id) => `${claim.prefix}${id}`).sort(),
      );

      // Not shown until the test is final.
      const running = await stack.runs.getRun({
        actor: project.key,
        projectId: project.projectId,
        runId: claim.runId,
      });
      expect(running.run?.tests[0]?.artifacts).to.deep.equal([]);

      const done = await stack.executor.completeTest({
        ...leaseOf(claim.assignment),
        status: TestStatus.FAILED,
        summary: "step 2: expected status 200, got 500",
        durationMs: 900n,
        failedStep: 2,
        stepResults: [
          { number: 1, status: TestStatus.PASSED, durationMs: 300n },
          { number: 2, status: TestStatus.FAILED, durationMs: 600n },
        ],
      });
      expect(done.test?.artifacts.map((a) => a.id)).to.deep.equal([artifact?.id, trace.artifact?.id]);

      const read = await stack.runs.getRun({
        actor: project.key,
        projectId: project.projectId,
        runId: claim.runId,
      });
      const shown = read.run?.tests[0];
      expect(shown?.artifacts.map((a) => [a.id, a.kind, a.name, a.sizeBytes, a.step])).to.deep.equal([
        [artifact?.id, ArtifactKind.SCREENSHOT, "failure", 4096n, 2],
        [trace.artifact?.id, ArtifactKind.TRACE, "trace", 2000n, 0],
      ]);
      expect(shown?.stepResults.map((s) => [s.number, s.status, s.durationMs])).to.deep.equal([
        [1, TestStatus.PASSED, 300n],
        [2, TestStatus.FAILED, 600n],
      ]);
      const single = await stack.runs.getTestResult({
        actor: member(project.members.viewer),
        projectId: project.projectId,
        runId: claim.runId,
        testResultId: claim.testResultId,
      });
      expect(single.test?.artifacts.map((a) => a.id)).to.deep.equal([artifact?.id, trace.artifact?.id]);
      expect(single.test?.stepResults).to.have.length(2);
      const watched = stack.runs.watchRun({
        actor: project.key,
        projectId: project.projectId,
        runId: claim.runId,
      });
      for await (const message of watched) {
        expect(message.run?.tests[0]?.artifacts.map((a) => a.id)).to.deep.equal([
          artifact?.id,
          trace.artifact?.id,
        ]);
        expect(message.run?.tests[0]?.stepResults).to.have.length(2);
        break;
      }

      // Readers of the project: its key, its members (a viewer too), an operator.
      for (const actor of [project.key, member(project.members.viewer), operator()]) {
        const got = await stack.runs.getArtifact({ actor, artifactId: artifact?.id ?? "" });
        expect(Buffer.from(got.content).equals(Buffer.from(content)), "the bytes stored").to.equal(true);
        expect(got.artifact?.contentType).to.equal("image/png");
      }
      // Anyone else: NOT_FOUND, worded as for an id that never existed.
      const other = await seedOrganization(stack.catalog.catalog);
      const unknown = await rejects(
        stack.runs.getArtifact({ actor: project.key, artifactId: "art_01jd3k6a0b1c2d3e4f5g6h7j8k" }),
        Code.NotFound,
      );
      for (const actor of [apiKey(other.members.editor, other.projectId), member(other.members.owner)]) {
        const refused = await rejects(
          stack.runs.getArtifact({ actor, artifactId: artifact?.id ?? "" }),
          Code.NotFound,
        );
        expect(refused.rawMessage).to.equal(unknown.rawMessage);
      }
      // A key of the project whose creator lost the rights it acts with is told so, as on every read.
      await rejects(
        stack.runs.getArtifact({
          actor: apiKey(project.members.viewer, project.projectId),
          artifactId: artifact?.id ?? "",
        }),
        Code.PermissionDenied,
      );
      await rejects(
        stack.runs.getArtifact({ actor: project.key, artifactId: "not-an-id" }),
        Code.InvalidArgument,
      );
      await rejects(stack.runs.getArtifact({ artifactId: artifact?.id ?? "" }), Code.InvalidArgument);
    });

    it("takes an artifact of the size cap through the service's request bound, over grpc-js too, and refuses one byte more with nothing stored", async () => {
      const claim = await claimed();
      expect(20 * MiB, "the cap is above the other methods' bound").to.be.greaterThan(serviceReadMaxBytes);
      const atCap = png(20 * MiB);
      const definition = protoLoader.loadSync("testrun/runs/v1/runs.proto", {
        includeDirs: [`${repoRoot}proto`],
        longs: String,
        enums: String,
        defaults: true,
      });
      const loaded = grpc.loadPackageDefinition(definition) as unknown as {
        testrun: { runs: { v1: { RunsService: grpc.ServiceClientConstructor } } };
      };
      const host = new URL(await stack.listen()).host;
      const executor = new loaded.testrun.runs.v1.RunsService(host, grpc.credentials.createInsecure());
      const reader = new loaded.testrun.runs.v1.RunsService(host, grpc.credentials.createInsecure(), {
        "grpc.max_receive_message_length": 64 * MiB,
      });
      const call = <T>(client: grpc.Client, method: string, token: string, request: object) =>
        new Promise<T>((resolve, reject) => {
          const metadata = new grpc.Metadata();
          metadata.set("authorization", `Bearer ${token}`);
          (client as unknown as Record<string, (...args: unknown[]) => void>)[method]?.(
            request,
            metadata,
            (error: grpc.ServiceError | null, response: T) => (error ? reject(error) : resolve(response)),
          );
        });
      try {
        const stored = await call<{ artifact: { id: string; sizeBytes: string } }>(
          executor,
          "PutArtifact",
          String(stack.env.EXECUTOR_TOKEN),
          {
            ...leaseOf(claim.assignment),
            kind: "ARTIFACT_KIND_SCREENSHOT",
            name: "home",
            contentType: "image/png",
            content: Buffer.from(atCap),
            step: 3,
          },
        );
        expect(stored.artifact.sizeBytes).to.equal(String(20 * MiB));
        const got = await call<{ content: Buffer }>(reader, "GetArtifact", String(stack.env.SERVICE_TOKEN), {
          actor: { operator: { name: "grpc-js" } },
          artifactId: stored.artifact.id,
        });
        expect(Buffer.from(got.content).equals(Buffer.from(atCap))).to.equal(true);
      } finally {
        executor.close();
        reader.close();
      }

      const over = await rejects(put(claim, { content: png(20 * MiB + 1) }), Code.ResourceExhausted);
      expect(over.rawMessage).to.match(/at most 20971520/);
      // The other methods keep the services' bound: a heartbeat of more than 8 MiB is not read.
      await rejects(
        stack.executor.heartbeatTest({
          ...leaseOf(claim.assignment),
          leaseToken: "x".repeat(serviceReadMaxBytes + 1),
        }),
        Code.ResourceExhausted,
      );
      expect((await rowsOf(claim.testResultId)).length).to.equal(1);
      expect(await backend.keys(stack, claim.prefix)).to.have.length(1);
    });

    it("refuses artifacts past the run's bytes and the test's count, nothing stored", async () => {
      const { run } = await stack.runs.startRun({
        actor: project.key,
        projectId: project.projectId,
        selection: { case: "testCaseIds", value: { ids: [threeSteps, project.cases[0] ?? ""] } },
      });
      const [a, b] = run?.tests ?? [];
      const claimA = {
        assignment: (await stack.executor.claimTest({ testResultId: a?.id ?? "", executorId: "x" }))
          .assignment,
      };
      const claimB = {
        assignment: (await stack.executor.claimTest({ testResultId: b?.id ?? "", executorId: "y" }))
          .assignment,
      };
      await put(claimA, { content: png(20 * MiB) });
      // The other test of the run: the run holds 20 of its 30 MiB.
      const full = await rejects(
        put(claimB, { content: png(10 * MiB + 1), step: 1 }),
        Code.ResourceExhausted,
      );
      expect(full.rawMessage).to.match(/run's artifacts would exceed 30 MiB/);
      await put(claimB, { content: png(10 * MiB), step: 1 });
      await rejects(put(claimB, { content: png(1), step: 1 }), Code.ResourceExhausted);
      const prefix = `${project.projectId}/${run?.id}/`;
      expect(await backend.keys(stack, prefix)).to.have.length(2);

      // The count of one test's attempt (3 here).
      const third = await claimed();
      for (let i = 0; i < 3; i++) await put(third, { name: `shot ${i}` });
      const many = await rejects(put(third, { name: "one more" }), Code.ResourceExhausted);
      expect(many.rawMessage).to.match(/already has 3 artifacts/);
      expect(await rowsOf(third.testResultId)).to.have.length(3);
      expect(await backend.keys(stack, third.prefix)).to.have.length(3);
    });

    it("refuses a wrong lease, a final test, another identity and bad fields, storing nothing", async () => {
      const claim = await claimed();
      await rejects(put(claim, { leaseToken: "not-mine" }), Code.Aborted);
      await rejects(put(claim, { testResultId: "tr_01jd3k6a0b1c2d3e4f5g6h7j8k" }), Code.NotFound);
      const invalid: [Partial<PutArtifactRequest>, RegExp][] = [
        [{ kind: ArtifactKind.UNSPECIFIED }, /kind must be/],
        [{ name: "" }, /name must be 1 to 100/],
        [{ name: "x".repeat(101) }, /name must be 1 to 100/],
        [{ name: "two\nlines" }, /one line/],
        [{ contentType: "text/html" }, /content_type of a screenshot must be image\/png/],
        [{ kind: ArtifactKind.BROWSER_LOG, contentType: "image/png" }, /must be application\/json/],
        [
          { kind: ArtifactKind.HTTP_RESPONSE, contentType: "text/html" },
          /http_response must be application\/json/,
        ],
        [{ step: -1 }, /step must not be negative/],
        [{ step: 4 }, /step must be at most 3/],
        [{ content: new Uint8Array() }, /content is empty/],
      ];
      for (const [fields, message] of invalid) {
        const error = await rejects(put(claim, fields), Code.InvalidArgument);
        expect(error.rawMessage).to.match(message);
      }
      // Only executors store artifacts; only the catalog purges them.
      await rejects(
        stack.runs.putArtifact(
          create(PutArtifactRequestSchema, { ...leaseOf(claim.assignment), kind: ArtifactKind.SCREENSHOT }),
        ),
        Code.PermissionDenied,
      );
      await rejects(
        stack.executor.purgeProjectArtifacts({ projectId: project.projectId }),
        Code.PermissionDenied,
      );
      await rejects(
        stack.executor.getArtifact({ actor: operator(), artifactId: "art_01jd3k6a0b1c2d3e4f5g6h7j8k" }),
        Code.PermissionDenied,
      );

      await stack.executor.completeTest({
        ...leaseOf(claim.assignment),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 1n,
      });
      await rejects(put(claim), Code.FailedPrecondition);
      expect(await rowsOf(claim.testResultId)).to.deep.equal([]);
      expect(await backend.keys(stack, claim.prefix)).to.deep.equal([]);
    });

    it("keeps an earlier attempt's artifacts with that attempt when the test is claimed again; the result shows the last attempt's", async () => {
      const claim = await claimed();
      const old = (await put(claim, { name: "before" })).artifact?.id ?? "";
      await stack.executor.releaseTest({ ...leaseOf(claim.assignment), reason: "shutting down" });
      const again = (
        await stack.executor.claimTest({ testResultId: claim.testResultId, executorId: "pod-b/0" })
      ).assignment;
      expect(again?.attempt).to.equal(2);
      // The earlier claim can store nothing more.
      await rejects(put(claim, { name: "late" }), Code.Aborted);
      const fresh = (await put({ assignment: again }, { name: "after" })).artifact?.id ?? "";
      await stack.executor.completeTest({
        ...leaseOf(again),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 5n,
      });
      const { run } = await stack.runs.getRun({
        actor: project.key,
        projectId: project.projectId,
        runId: claim.runId,
      });
      const test = run?.tests[0];
      expect(test?.artifacts.map((a) => a.id)).to.deep.equal([fresh]);
      // Each attempt keeps what it stored: the handed-back one its artifact, readable as before.
      expect(test?.attempts.map((a) => [a.number, a.artifacts.map((x) => x.id)])).to.deep.equal([
        [1, [old]],
        [2, [fresh]],
      ]);
      expect(test?.attempts[0]?.status).to.equal(TestStatus.SKIPPED);
      const read = await stack.runs.getArtifact({ actor: operator(), artifactId: old });
      expect(read.artifact?.name).to.equal("before");
      expect((await backend.keys(stack, claim.prefix)).sort()).to.deep.equal(
        [`${claim.prefix}${old}`, `${claim.prefix}${fresh}`].sort(),
      );
    });

    it("keeps artifacts for the retention period, then they are NOT_FOUND and the sweeper deletes bytes and rows", async () => {
      const claim = await claimed();
      const { artifact } = await put(claim);
      const id = artifact?.id ?? "";
      await stack.executor.completeTest({
        ...leaseOf(claim.assignment),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 1n,
      });
      // ARTIFACT_RETENTION_DAYS is 30 by default: it expires 30 days after it was stored.
      const [row] = (
        await stack.db.query<{ days: number }>(
          "select extract(epoch from expires_at - created_at) / 86400 as days from runs.artifacts where id = $1",
          [id],
        )
      ).rows;
      expect(Number(row?.days)).to.equal(30);
      await stack.runs.getArtifact({ actor: operator(), artifactId: id });
      // 30 days later.
      await stack.db.query(
        "update runs.artifacts set expires_at = now() - interval '1 second' where id = $1",
        [id],
      );
      await rejects(stack.runs.getArtifact({ actor: operator(), artifactId: id }), Code.NotFound);
      const { run } = await stack.runs.getRun({
        actor: project.key,
        projectId: project.projectId,
        runId: claim.runId,
      });
      expect(run?.tests[0]?.artifacts).to.deep.equal([]);
      await eventually(
        async () => ((await backend.keys(stack, claim.prefix)).length === 0 ? true : undefined),
        "the expired bytes to be deleted",
      );
      await eventually(
        async () => ((await rowsOf(claim.testResultId)).length === 0 ? true : undefined),
        "the row to go",
      );
    });

    it("purges a deleted project's artifacts when the catalog deletes it, and stores none for it afterwards", async () => {
      const claim = await claimed();
      const ids = [
        (await put(claim, { name: "a" })).artifact?.id ?? "",
        (await put(claim, { name: "b" })).artifact?.id ?? "",
      ];
      await stack.executor.completeTest({
        ...leaseOf(claim.assignment),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 1n,
      });
      const second = await claimed();
      await put(second, { name: "c" });
      expect(await backend.keys(stack, `${project.projectId}/`)).to.have.length(3);

      await stack.catalog.catalog.deleteProject({
        actor: member(project.members.owner),
        projectId: project.projectId,
      });
      // Delivered right after the commit, before DeleteProject answered.
      for (const id of ids)
        await rejects(stack.runs.getArtifact({ actor: operator(), artifactId: id }), Code.NotFound);
      await eventually(
        async () => ((await backend.keys(stack, `${project.projectId}/`)).length === 0 ? true : undefined),
        "the project's bytes to be deleted",
      );
      const left = await stack.db.query("select 1 from runs.artifacts where project_id = $1", [
        project.projectId,
      ]);
      expect(left.rows).to.deep.equal([]);
      // An executor still at work on a test of the project stores nothing.
      await rejects(put(second, { name: "late" }), Code.NotFound);
      expect(await backend.keys(stack, `${project.projectId}/`)).to.deep.equal([]);
      // The purge is idempotent.
      const repeated = await stack.runs.purgeProjectArtifacts({ projectId: project.projectId });
      expect([repeated.deletedCount, repeated.remainingCount]).to.deep.equal([0n, 0n]);
      await rejects(stack.runs.purgeProjectArtifacts({ projectId: "" }), Code.InvalidArgument);
    });

    it("stores step results with the result and refuses ones out of order, out of range or after a failure", async () => {
      const claim = await claimed();
      const complete = (stepResults: { number: number; status: TestStatus; durationMs: bigint }[]) =>
        stack.executor.completeTest({
          ...leaseOf(claim.assignment),
          status: TestStatus.PASSED,
          summary: "",
          durationMs: 30n,
          stepResults,
        });
      const step = (number: number, status = TestStatus.PASSED, durationMs = 10n) => ({
        number,
        status,
        durationMs,
      });
      const refused: [ReturnType<typeof step>[], RegExp][] = [
        [[step(2), step(1)], /greater than the one before/],
        [[step(0)], /at least 1/],
        [[step(1), step(1)], /greater than the one before/],
        [[step(1, TestStatus.SKIPPED)], /PASSED or FAILED/],
        [[step(1, TestStatus.FAILED), step(2)], /first FAILED step/],
        [[step(1, TestStatus.PASSED, -1n)], /duration_ms must be 0 to/],
        [[step(1), step(2), step(3), step(4)], /from 1 to 3/],
      ];
      for (const [results, message] of refused) {
        const error = await rejects(complete(results), Code.InvalidArgument);
        expect(error.rawMessage).to.match(message);
      }
      const done = await complete([step(1), step(2, TestStatus.PASSED, 7n), step(3)]);
      expect(done.test?.stepResults.map((s) => s.durationMs)).to.deep.equal([10n, 7n, 10n]);
      // Repeating the same report returns the stored result; another report is refused.
      await complete([step(1), step(2, TestStatus.PASSED, 7n), step(3)]);
      await rejects(complete([step(1)]), Code.FailedPrecondition);
      const { run } = await stack.runs.getRun({
        actor: project.key,
        projectId: project.projectId,
        runId: claim.runId,
      });
      expect(run?.status).to.equal(RunStatus.PASSED);
      expect(run?.tests[0]?.stepResults.map((s) => s.number)).to.deep.equal([1, 2, 3]);
    });

    it("hands executors record_trace when the run asks for traces, and keeps it on a rerun", async () => {
      const plain = await claimed();
      expect(plain.assignment?.recordTrace).to.equal(false);
      const traced = await claimed({ recordTraces: true });
      expect(traced.assignment?.recordTrace).to.equal(true);
      const { run } = await stack.runs.rerunRun({
        actor: project.key,
        projectId: project.projectId,
        runId: traced.runId,
      });
      const { assignment } = await stack.executor.claimTest({
        testResultId: run?.tests[0]?.id ?? "",
        executorId: "z",
      });
      expect(assignment?.recordTrace).to.equal(true);
    });
  });
}
