import type { Environment, Project, TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Run, TestResult } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  rfc3339,
  runFieldsJson,
  runJson as sharedRunJson,
  testResultJson as sharedTestResultJson,
} from "@testrun/kit/run-json";
import type { z } from "zod";
import type {
  environmentSchema,
  projectSchema,
  runListItemSchema,
  runSchema,
  testCaseSchema,
  testPlanSchema,
  testResultSchema,
} from "./api/schemas.js";

/**
 * The JSON of /v1 (docs/rest-api.md, "Resources"): camelCase fields, exactly those the contract
 * lists, and RFC 3339 UTC timestamps with milliseconds. Each answer is typed by its schema in
 * api/schemas.ts, from which the OpenAPI document is generated.
 */

export { artifactUrl, rfc3339 } from "@testrun/kit/run-json";

export const projectJson = (project: Project): z.output<typeof projectSchema> => ({
  id: project.id,
  name: project.name,
  createdAt: rfc3339(project.createdAt) as string,
});

export const environmentJson = (environment: Environment): z.output<typeof environmentSchema> => ({
  id: environment.id,
  name: environment.name,
  baseUrl: environment.baseUrl,
  isDefault: environment.isDefault,
});

export const testPlanJson = (plan: TestPlan): z.output<typeof testPlanSchema> => ({
  id: plan.id,
  name: plan.name,
  description: plan.description,
  testCaseCount: plan.testCaseCount,
  retries: plan.retries ?? null,
});

export const testCaseJson = (testCase: TestCase): z.output<typeof testCaseSchema> => ({
  id: testCase.id,
  name: testCase.name,
  tags: [...testCase.tags],
  enabled: testCase.enabled,
  retries: testCase.retries,
});

/** A test result; `origin` is the API's public origin, the base of its artifacts' urls. */
export const testResultJson: (test: TestResult, origin: string) => z.output<typeof testResultSchema> =
  sharedTestResultJson;

/** A run as GET /v1/runs/:id shows it (with its tests); `origin` as for testResultJson (kit run-json.ts). */
export const runJson: (run: Run, origin: string) => z.output<typeof runSchema> = sharedRunJson;

/** A run as an element of GET /v1/runs: without tests, with where it ran and when it was made. */
export const runListJson = (run: Run): z.output<typeof runListItemSchema> => ({
  ...runFieldsJson(run),
  environmentId: run.environmentId,
  testPlanId: run.testPlanId ?? null,
  createdAt: rfc3339(run.createdAt) as string,
});
