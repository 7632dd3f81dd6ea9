// Seeds the demo organization `make run` prints a key for: a project with two environments, the
// test cases of test-cases.yaml (HTTP) and browser-test-cases.yaml (browser steps, tagged browser),
// a smoke plan, the demo login variables, 1,000 credits and an API key.
import { readFileSync } from "node:fs";
import {
  createCliContext,
  createEnvironment,
  createKey,
  createOrganization,
  createProject,
  createTestCases,
  createTestPlan,
  grantCredits,
  readTestCaseFile,
  setVariable,
} from "@testrun/cli";
import { KeyKind } from "@testrun/gen/testrun/keys/v1/keys_pb";

/**
 * The demo target's login, stored in the demo project as the variables DEMO_USER, DEMO_PASSWORD
 * and DEMO_EMAIL (what its web app's sign-in form takes).
 */
export const demoCredentials = { user: "demo", password: "demo-password", email: "demo@demo.example" };

/** The demo's test case files, in the order they are created. */
const testCaseFiles = ["./test-cases.yaml", "./browser-test-cases.yaml"];

export interface Demo {
  projectId: string;
  /** The demo organization's owner (owner@demo.example). */
  ownerMemberId: string;
  secret: string;
  /** A content token of the owner (trc_…): what `testrun push` imports specs with. */
  contentToken: string;
  /** The Smoke plan and the environment it runs on by default ("local", the demo target). */
  smokePlanId: string;
  localEnvironmentId: string;
}

export async function seedDemo(env: Record<string, string>, targetUrl: string): Promise<Demo> {
  const ctx = createCliContext(env);
  const { organization, owner } = await createOrganization(ctx, {
    name: "Demo organization",
    ownerEmail: "owner@demo.example",
    ownerName: "Demo Owner",
  });
  const project = await createProject(ctx, { organizationId: organization?.id ?? "", name: "Demo project" });
  const local = await createEnvironment(ctx, {
    projectId: project.id,
    name: "local",
    baseUrl: targetUrl,
    isDefault: true,
  });
  await createEnvironment(ctx, { projectId: project.id, name: "unreachable", baseUrl: "http://127.0.0.1:9" });
  await createTestCases(ctx, {
    projectId: project.id,
    testCases: testCaseFiles.flatMap((name) => {
      const file = new URL(name, import.meta.url);
      return readTestCaseFile(readFileSync(file, "utf8"), file.pathname);
    }),
  });
  const smoke = await createTestPlan(ctx, {
    projectId: project.id,
    name: "Smoke",
    description: "The checks every deploy must pass",
    testCases: ["health answers", "log in with the demo user"],
  });
  await setVariable(ctx, { projectId: project.id, name: "DEMO_USER", value: demoCredentials.user });
  await setVariable(ctx, { projectId: project.id, name: "DEMO_PASSWORD", value: demoCredentials.password });
  await setVariable(ctx, { projectId: project.id, name: "DEMO_EMAIL", value: demoCredentials.email });
  await grantCredits(ctx, {
    projectId: project.id,
    amount: 1000,
    reason: "demo credits",
    idempotencyKey: `demo-${project.id}`,
  });
  const { secret } = await createKey(ctx, {
    projectId: project.id,
    name: "make run demo",
    creatorMemberId: owner?.id ?? "",
  });
  const { secret: contentToken } = await createKey(ctx, {
    projectId: project.id,
    name: "make run demo: testrun push",
    creatorMemberId: owner?.id ?? "",
    kind: KeyKind.CONTENT_TOKEN,
  });
  return {
    projectId: project.id,
    ownerMemberId: owner?.id ?? "",
    secret,
    contentToken,
    smokePlanId: smoke.id,
    localEnvironmentId: local.id,
  };
}
