// Streams and waits are fair (docs/security.md, "Resource limits"): one person or one project
// cannot take every live run stream or long-poll, and a service at capacity is never a 500. Small
// bounds here, through the whole system as real processes.

import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { addMember, createCliContext, createEnvironment, createKey } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { eventually } from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import type { System } from "../scripts/system.js";
import { consoleClient, refusal, signIn } from "./console-client.js";
import { HeldTarget } from "./held-target.js";
import { addCases, newProject, Pipeline, startTestSystem, type TestProject } from "./pipeline.js";

const bounds = {
  /** Anonymous sign-in requests per console replica and minute (this suite signs in ~15 times). */
  authRequestsPerMinute: 30,
  streamsPerSession: 2,
  streamsPerProject: 3,
  waitsPerKey: 2,
  waitsPerProject: 3,
  /** WatchRun streams the (one) runs replica serves: two projects' console streams fill it. */
  runsStreams: 6,
};

type Console = Client<typeof ConsoleService>;

/**
 * A run page's live stream, opened until its first message (a refusal rejects); `close()` leaves,
 * `next()` waits for what comes next (a message, the end, or how it failed).
 */
async function liveStream(client: Console, projectId: string, runId: string) {
  const abort = new AbortController();
  const messages = client.watchRun({ projectId, runId }, { signal: abort.signal })[Symbol.asyncIterator]();
  const first = await messages.next();
  expect(first.value?.run?.run?.id).to.equal(runId);
  return { close: () => abort.abort(), next: () => messages.next() };
}

/**
 * liveStream once the runs service has a place for it: the streams an earlier test closed are
 * given back as soon as the runs service sees their callers leave, not at once.
 */
const liveStreamWhenFree = (client: Console, projectId: string, runId: string) =>
  eventually(
    () =>
      liveStream(client, projectId, runId).catch((error: unknown) => {
        if (ConnectError.from(error).code === Code.ResourceExhausted) return undefined;
        throw error;
      }),
    "a place for the stream",
  );

describe("fair streams and waits (end to end)", function () {
  this.timeout(60_000);
  let system: System;
  let target: HeldTarget;
  let redis: Redis;
  /** Each project with a run held RUNNING until the suite ends. */
  const projects: (TestProject & { runId: string; organizationId: string })[] = [];
  const releases: (() => void)[] = [];

  const projectWaits = (projectId: string) => redis.zcard(`testrun:gateway:project-waits:${projectId}`);

  before(async () => {
    target = await HeldTarget.start();
    system = await startTestSystem({
      serviceEnv: {
        console: {
          WATCH_STREAMS_PER_SESSION: String(bounds.streamsPerSession),
          WATCH_STREAMS_PER_PROJECT: String(bounds.streamsPerProject),
          AUTH_REQUESTS_PER_MINUTE: String(bounds.authRequestsPerMinute),
        },
        gateway: {
          WAITS_PER_KEY: String(bounds.waitsPerKey),
          WAITS_PER_PROJECT: String(bounds.waitsPerProject),
        },
        runs: { WATCH_MAX_STREAMS: String(bounds.runsStreams) },
      },
    });
    redis = new Redis(String(process.env.REDIS_URL));
    const ctx = createCliContext(system.env);
    for (const name of ["fair acme", "fair globex", "fair initech", "fair umbrella"]) {
      const project = await newProject(system, name, { credits: 10 });
      const path = `/hold/${name.replace(" ", "-")}`;
      releases.push(target.hold(path));
      await createEnvironment(ctx, { projectId: project.projectId, name: "held", baseUrl: target.url });
      // The held step waits up to 120 s (the most a step may), longer than this suite runs: the runs
      // stay unfinished, so their streams stay open.
      await addCases(
        system,
        project.projectId,
        `- name: Held\n  tags: [held]\n  steps:\n    - name: wait for it\n      http: { method: GET, path: "${path}", timeoutMs: 120000 }\n`,
      );
      const run = await project.pipeline.start({ tags: ["held"], environment: "held" });
      const owner = consoleClient(system, await signIn(system, project.ownerId));
      const organizationId =
        (await owner.getProject({ projectId: project.projectId })).organization?.id ?? "";
      projects.push({ ...project, runId: run.id, organizationId });
    }
  });
  after(async () => {
    for (const release of releases) release();
    redis?.disconnect();
    await target?.stop();
    await system?.stop();
  });

  it("bounds a project's long-polls across its keys: one more is 429 with Retry-After; another project's wait is answered", async () => {
    const [, , initech, umbrella] = projects as [
      (typeof projects)[0],
      (typeof projects)[0],
      (typeof projects)[0],
      (typeof projects)[0],
    ];
    const { secret } = await createKey(createCliContext(system.env), {
      projectId: initech.projectId,
      name: "second",
      creatorMemberId: initech.ownerId,
    });
    const second = new Pipeline(system.gatewayUrl, secret);
    // Long enough that the held waits are still on when the fourth arrives, on a busy machine too.
    const wait = (pipeline: Pipeline) => pipeline.call("GET", `/v1/runs/${initech.runId}?wait=5`);
    // The first key holds all it may, the second one: the project holds WAITS_PER_PROJECT.
    const waits = [wait(initech.pipeline), wait(initech.pipeline), wait(second)];
    await eventually(
      async () => ((await projectWaits(initech.projectId)) === bounds.waitsPerProject ? true : undefined),
      "the project's waits to begin",
    );
    const refused = await wait(second);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(429);
    expect(refused.body).to.include({ code: "rate_limited" });
    expect(refused.body.error).to.contain(`this project's keys already hold ${bounds.waitsPerProject} waits`);
    expect(refused.headers.get("retry-after")).to.equal("1");

    const elsewhere = await umbrella.pipeline.call("GET", `/v1/runs/${umbrella.runId}?wait=1`);
    expect(elsewhere.status).to.equal(200);
    for (const answer of await Promise.all(waits)) expect(answer.status).to.equal(200);
    expect(await projectWaits(initech.projectId), "every slot is freed").to.equal(0);
  });

  it("bounds a session's live run streams (a Viewer's too) and a project's, while another tenant's stream opens", async () => {
    const [acme, globex] = projects as [(typeof projects)[0], (typeof projects)[0]];
    const viewer = await addMember(createCliContext(system.env), {
      organizationId: acme.organizationId,
      email: "viewer@fair-acme.example",
      displayName: "Vera Viewer",
      role: Role.VIEWER,
    });
    const asViewer = consoleClient(system, await signIn(system, viewer.id));
    const open = [];
    for (let i = 0; i < bounds.streamsPerSession; i++)
      open.push(await liveStreamWhenFree(asViewer, acme.projectId, acme.runId));
    const overSession = await refusal(liveStream(asViewer, acme.projectId, acme.runId));
    expect(overSession.code).to.equal(Code.ResourceExhausted);
    expect(overSession.rawMessage).to.contain(`this session follows ${bounds.streamsPerSession} runs live`);

    // Another tenant is not affected.
    const asGlobex = consoleClient(system, await signIn(system, globex.ownerId));
    open.push(await liveStreamWhenFree(asGlobex, globex.projectId, globex.runId));

    // Another session of the same project takes the project's last place; then the project is full.
    const asOwner = consoleClient(system, await signIn(system, acme.ownerId));
    open.push(await liveStreamWhenFree(asOwner, acme.projectId, acme.runId));
    const overProject = await refusal(liveStream(asOwner, acme.projectId, acme.runId));
    expect(overProject.code).to.equal(Code.ResourceExhausted);
    expect(overProject.rawMessage).to.contain(`followed live by ${bounds.streamsPerProject} pages`);

    // A closed stream gives its place back.
    open.shift()?.close();
    open.push(await liveStreamWhenFree(asViewer, acme.projectId, acme.runId));
    for (const stream of open) stream.close();
  });

  it("answers 429 with Retry-After, never 500, to a long-poll when the runs service is at capacity; the console refuses with resource_exhausted", async () => {
    const [acme, globex, initech] = projects as [
      (typeof projects)[0],
      (typeof projects)[0],
      (typeof projects)[0],
    ];
    // Two projects' console streams, three each over two sessions, take every WatchRun stream.
    const open = [];
    for (const project of [acme, globex]) {
      for (const streams of [2, 1]) {
        const client = consoleClient(system, await signIn(system, project.ownerId));
        for (let i = 0; i < streams; i++)
          open.push(await liveStreamWhenFree(client, project.projectId, project.runId));
      }
    }
    expect(open).to.have.length(bounds.runsStreams);
    try {
      const answer = await initech.pipeline.call("GET", `/v1/runs/${initech.runId}?wait=5`);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(429);
      expect(answer.body).to.include({ code: "rate_limited" });
      expect(answer.headers.get("retry-after")).to.equal("5");
      // Without a wait, the run is read as usual.
      expect((await initech.pipeline.call("GET", `/v1/runs/${initech.runId}`)).status).to.equal(200);

      const page = consoleClient(system, await signIn(system, initech.ownerId));
      const refused = await refusal(liveStream(page, initech.projectId, initech.runId));
      expect(refused.code).to.equal(Code.ResourceExhausted);
    } finally {
      for (const stream of open) stream.close();
    }
  });
  it("a session that ends closes its live run streams at once: its member removed in the console, Sign out everywhere", async () => {
    const umbrella = projects[3] as (typeof projects)[0];
    const leaving = await addMember(createCliContext(system.env), {
      organizationId: umbrella.organizationId,
      email: "leaving@fair-umbrella.example",
      displayName: "Lee Leaving",
      role: Role.VIEWER,
    });
    const asLeaving = consoleClient(system, await signIn(system, leaving.id));
    const leavingStream = await liveStreamWhenFree(asLeaving, umbrella.projectId, umbrella.runId);
    const ownerLaptop = consoleClient(system, await signIn(system, umbrella.ownerId));
    const laptopStream = await liveStreamWhenFree(ownerLaptop, umbrella.projectId, umbrella.runId);
    const ownerPhone = consoleClient(system, await signIn(system, umbrella.ownerId));
    try {
      // The run is held: without the session's end, each stream would stay open for its window (50 s).
      await ownerPhone.removeMember({ organizationId: umbrella.organizationId, memberId: leaving.id });
      expect((await refusal(leavingStream.next())).code).to.equal(Code.Unauthenticated);
      await ownerPhone.signOutEverywhere({});
      expect((await refusal(laptopStream.next())).code).to.equal(Code.Unauthenticated);
    } finally {
      leavingStream.close();
      laptopStream.close();
    }
  });

  // Last: it spends the console's sign-in bound, which comes back over a minute.
  it("bounds anonymous sign-in requests per console replica: past it 429 with Retry-After, while signed-in calls and sign-out are answered", async () => {
    const acme = projects[0] as (typeof projects)[0];
    const signedIn = await signIn(system, acme.ownerId);
    const post = (path: string, body: string) =>
      fetch(`${system.consoleUrl}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(path === "/auth/sign-out" && { cookie: signedIn }),
        },
        body,
      });
    const flood = await Promise.all(
      Array.from({ length: bounds.authRequestsPerMinute * 2 }, () =>
        post("/auth/link/preview", JSON.stringify({ token: "C".repeat(43) })),
      ),
    );
    const refused = flood.filter((answer) => answer.status === 429);
    // At most the bound (plus what came back during the flood) was looked up; the rest refused.
    expect(refused.length).to.be.greaterThan(bounds.authRequestsPerMinute / 2);
    for (const answer of flood) expect(answer.status).to.be.oneOf([400, 429]);
    for (const answer of refused) {
      expect(Number(answer.headers.get("retry-after"))).to.be.within(1, 60);
      expect(await answer.json()).to.include({ error: "too_many_requests" });
    }
    // Using a link is refused too (a burst: the bucket gives a request back every 2 s, which a
    // loaded machine may have reached since the flood); the signed-in person's calls are not counted.
    const uses = await Promise.all(
      Array.from({ length: 5 }, () => post("/auth/link", JSON.stringify({ token: "D".repeat(43) }))),
    );
    const used = uses.map((answer) => answer.status);
    expect(used, "a link used past the bound").to.include(429);
    for (const status of used) expect(status).to.be.oneOf([400, 429]);
    expect((await consoleClient(system, signedIn).getSession({})).memberships).to.have.length(1);
    expect((await post("/auth/sign-out", "")).status).to.equal(204);
  });
});
