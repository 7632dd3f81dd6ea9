import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Environment, Project, TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";

/**
 * The JSON of /v1 (rest-api-v1.md §2, decisions.md "The REST surface"): camelCase fields, exactly
 * those the contract lists, and RFC 3339 UTC timestamps with milliseconds.
 */

export const rfc3339 = (timestamp: Timestamp | undefined): string | null =>
  timestamp ? timestampDate(timestamp).toISOString() : null;

export const projectJson = (project: Project) => ({
  id: project.id,
  name: project.name,
  createdAt: rfc3339(project.createdAt),
});

export const environmentJson = (environment: Environment) => ({
  id: environment.id,
  name: environment.name,
  baseUrl: environment.baseUrl,
  isDefault: environment.isDefault,
});

export const testPlanJson = (plan: TestPlan) => ({
  id: plan.id,
  name: plan.name,
  description: plan.description,
  testCaseCount: plan.testCaseCount,
});

export const testCaseJson = (testCase: TestCase) => ({
  id: testCase.id,
  name: testCase.name,
  tags: [...testCase.tags],
  enabled: testCase.enabled,
});
