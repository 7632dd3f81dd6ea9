import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { readTestCaseFile } from "@testrun/cli";
import { repoRoot } from "@testrun/kit/testing";
import { expect } from "chai";
import { runSteps } from "../src/steps/runner.js";
import { localEgress } from "./target.js";

/** The demo target started as `make run` starts it: its own process, from its entry. */
async function startDemoTarget(env: Record<string, string>): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ["--conditions=source", "--import", "tsx", `${repoRoot}services/executor/src/demo-target/main.ts`],
    { cwd: repoRoot, env: { ...process.env, PORT: "0", ...env }, stdio: ["ignore", "pipe", "inherit"] },
  );
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg === "listening") return { url: `http://127.0.0.1:${entry.port}`, process: child };
  }
  throw new Error("the demo target exited before listening");
}

describe("demo target", () => {
  const credentials = { DEMO_USER: "demo", DEMO_PASSWORD: "demo-password" };
  let target: { url: string; process: ChildProcess };
  before(async () => {
    target = await startDemoTarget(credentials);
  });
  after(async () => {
    target.process.kill("SIGTERM");
    if (target.process.exitCode === null) await once(target.process, "exit");
  });

  const login = (body: string) =>
    fetch(`${target.url}/api/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });

  it("answers /health with ok", async () => {
    const response = await fetch(`${target.url}/health`);
    expect(response.status).to.equal(200);
    expect(await response.text()).to.equal("ok");
  });

  it("logs the configured user in, and the token opens the profile", async () => {
    const response = await login(JSON.stringify({ user: "demo", password: "demo-password" }));
    expect(response.status).to.equal(200);
    const body = (await response.json()) as { ok: boolean; token: string };
    expect(body.ok).to.equal(true);
    expect(body.token).to.be.a("string").with.length.above(20);
    const profile = await fetch(`${target.url}/api/profile`, {
      headers: { authorization: `Bearer ${body.token}` },
    });
    expect(profile.status).to.equal(200);
    expect(await profile.json()).to.deep.equal({ ok: true, user: "demo" });
  });

  it("refuses a wrong password (401), a body that is not JSON (400), and a profile without a valid token", async () => {
    expect((await login(JSON.stringify({ user: "demo", password: "nope" }))).status).to.equal(401);
    expect((await login("not json")).status).to.equal(400);
    expect((await fetch(`${target.url}/api/profile`)).status).to.equal(401);
    const forged = await fetch(`${target.url}/api/profile`, { headers: { authorization: "Bearer forged" } });
    expect(forged.status).to.equal(401);
  });

  it("answers 404 anywhere else, and to a known path with another method", async () => {
    expect((await fetch(`${target.url}/no-such-page`)).status).to.equal(404);
    expect((await fetch(`${target.url}/api/login`)).status).to.equal(404);
  });

  it("passes the seeded Smoke plan's test cases with the seeded variables", async () => {
    const file = `${repoRoot}scripts/demo/test-cases.yaml`;
    const cases = readTestCaseFile(readFileSync(file, "utf8"), file);
    const outcomes = Object.fromEntries(
      await Promise.all(
        cases.map(async (c) => [
          c.name,
          await runSteps(c.steps, { baseUrl: target.url, variables: credentials, egress: localEgress }),
        ]),
      ),
    );
    expect(outcomes["health answers"]).to.include({ passed: true });
    expect(outcomes["log in with the demo user"]).to.include({ passed: true, summary: "2 steps passed" });
  });

  it("fails a login expectation it does not meet, with a summary naming the step and both statuses", async () => {
    // The shape of the case proposed for scripts/demo/test-cases.yaml, so the demo shows a failure.
    const [wrongPassword] = readTestCaseFile(
      `name: a wrong password is forbidden
steps:
  - name: log in with a wrong password
    http: { method: POST, path: /api/login, json: { user: "{{DEMO_USER}}", password: "wrong" } }
    expect: { status: 403 }
`,
      "case.yaml",
    );
    const outcome = await runSteps(wrongPassword?.steps ?? [], {
      baseUrl: target.url,
      variables: credentials,
      egress: localEgress,
    });
    expect(outcome).to.include({
      passed: false,
      summary: 'step 1 "log in with a wrong password": expected status 403, got 401',
    });
  });
});
