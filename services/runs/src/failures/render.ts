// Failure groups as the API shows them (runs.proto's FailureGroup, FailureGroupBrief,
// FailureOccurrence, FailureGroupCase), from the rows the trigger of
// Migration20261128220000_failure_groups keeps.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type FailureGroup,
  type FailureGroupBrief,
  FailureGroupBriefSchema,
  FailureGroupCaseSchema,
  FailureGroupSchema,
  FailureGroupState,
  FailureOccurrenceSchema,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { dbDate } from "@testrun/kit";
import { failureCauses } from "../causes.js";
import type { FailureCause } from "../db/entities.js";
import type { Links } from "../links.js";
import type { FailureGroupBriefRow } from "../rows.js";

export type GroupState = FailureGroupBriefRow["state"];

export const groupStates: Record<GroupState, FailureGroupState> = {
  open: FailureGroupState.OPEN,
  resolved: FailureGroupState.RESOLVED,
  reopened: FailureGroupState.REOPENED,
};

/** Where a group was first or last seen, as stored. */
export interface SeenRow {
  run: string;
  id: string;
  case: string;
  name: string;
  v: number;
  env: string;
  at: string;
  attempt: number;
  summary: string;
}

export interface FailureGroupRow {
  id: string;
  project_id: string;
  fingerprint: string;
  step_kind: string;
  action: string;
  target: string;
  cause: FailureCause;
  message: string;
  state: GroupState;
  occurrences: number;
  cases_affected: number;
  first_seen: SeenRow;
  last_seen: SeenRow;
  resolved_at: string | Date | null;
}

export interface OccurrenceRow {
  id: string;
  run_id: string;
  test_result_id: string;
  attempt: number;
  test_case_id: string;
  test_case_name: string;
  case_version: number;
  environment_id: string;
  summary: string;
  at: string | Date;
  page_at: string;
}

export interface GroupCaseRow {
  test_case_id: string;
  name: string;
  occurrences: number;
  last_seen_at: string | Date;
  open: boolean;
}

export const renderGroupBrief = (row: FailureGroupBriefRow): FailureGroupBrief =>
  create(FailureGroupBriefSchema, {
    id: row.id,
    occurrences: row.occurrences,
    casesAffected: row.cases_affected,
    firstSeenRunId: row.first_seen.run,
    firstSeenAt: timestampFromDate(dbDate(row.first_seen.at)),
    state: groupStates[row.state],
  });

const seenOf = (seen: SeenRow, projectId: string, links: Links) =>
  create(FailureOccurrenceSchema, {
    runId: seen.run,
    testResultId: seen.id,
    testCaseId: seen.case,
    testCaseName: seen.name,
    caseVersion: seen.v,
    environmentId: seen.env,
    at: timestampFromDate(dbDate(seen.at)),
    attempt: seen.attempt,
    summary: seen.summary,
    url: links.test(projectId, seen.run, seen.id),
  });

export const renderGroup = (row: FailureGroupRow, links: Links): FailureGroup =>
  create(FailureGroupSchema, {
    id: row.id,
    projectId: row.project_id,
    fingerprint: row.fingerprint,
    stepKind: row.step_kind,
    action: row.action,
    target: row.target,
    cause: failureCauses[row.cause],
    message: row.message,
    state: groupStates[row.state],
    occurrences: row.occurrences,
    casesAffected: row.cases_affected,
    firstSeen: seenOf(row.first_seen, row.project_id, links),
    lastSeen: seenOf(row.last_seen, row.project_id, links),
    ...(row.resolved_at && { resolvedAt: timestampFromDate(dbDate(row.resolved_at)) }),
  });

export const renderOccurrence = (row: OccurrenceRow, projectId: string, links: Links) =>
  create(FailureOccurrenceSchema, {
    runId: row.run_id,
    testResultId: row.test_result_id,
    attempt: row.attempt,
    testCaseId: row.test_case_id,
    testCaseName: row.test_case_name,
    caseVersion: row.case_version,
    environmentId: row.environment_id,
    at: timestampFromDate(dbDate(row.at)),
    summary: row.summary,
    url: links.test(projectId, row.run_id, row.test_result_id),
  });

export const renderGroupCase = (row: GroupCaseRow) =>
  create(FailureGroupCaseSchema, {
    testCaseId: row.test_case_id,
    name: row.name,
    occurrences: row.occurrences,
    lastSeenAt: timestampFromDate(dbDate(row.last_seen_at)),
    open: row.open,
  });
