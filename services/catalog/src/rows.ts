import { create, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Environment,
  EnvironmentSchema,
  type Member,
  MemberSchema,
  MemberState,
  type Organization,
  OrganizationSchema,
  type Project,
  ProjectSchema,
  type TestCase,
  TestCaseSchema,
  type TestPlan,
  TestPlanSchema,
  type Variable,
  VariableSchema,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type ChangedBy, ChangedBySchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import type { MemberRole } from "./db/entities.js";
import { playwrightFromStorage } from "./playwright.js";
import { roleFromDb } from "./roles.js";
import { stepsFromStorage } from "./steps.js";

// Rows as the catalog's queries return them (column names as in the schema), the column lists that
// select them, and their proto messages.

export interface OrganizationRow {
  id: string;
  name: string;
  created_at: Date;
}
export const organizationColumns = "o.id, o.name, o.created_at";

export interface MemberRow {
  id: string;
  organization_id: string;
  email: string;
  display_name: string;
  role: MemberRole;
  created_at: Date;
  removed_at: Date | null;
  rights_lost_at: Date | null;
}
export const memberColumns =
  "m.id, m.organization_id, m.email, m.display_name, m.role, m.created_at, m.removed_at, m.rights_lost_at";

export interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}
export const projectColumns = "p.id, p.organization_id, p.name, p.description, p.created_at, p.updated_at";

export interface EnvironmentRow {
  id: string;
  project_id: string;
  name: string;
  base_url: string;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}
export const environmentColumns =
  "e.id, e.project_id, e.name, e.base_url, e.is_default, e.created_at, e.updated_at";

/**
 * Who stored a version (the `changed_by_*` columns of a *_versions row, aliased `v`, and its member
 * `m`), as one JSON value: `{ member_id, operator, name, email }`, member_id and operator both null
 * when nobody was recorded.
 */
export interface ChangedByRow {
  member_id: string | null;
  operator: string | null;
  name: string | null;
  email: string | null;
}
export const changedByJson = `json_build_object('member_id', v.changed_by_member_id, 'operator', v.changed_by_operator,
  'name', m.display_name, 'email', m.email)`;

/** The ChangedByRow of version `version` of item `id`, from the versions table `table` keyed by `key`. */
const changedByOf = (table: string, key: string, id: string, version: string) =>
  `(select ${changedByJson} from catalog.${table} v left join catalog.members m on m.id = v.changed_by_member_id
    where v.${key} = ${id} and v.version = ${version}) as updated_by`;

export interface TestPlanRow {
  id: string;
  project_id: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
  test_case_ids: string[];
  /** Null when the plan sets none. */
  retries: number | null;
  version: number;
  updated_by: ChangedByRow | null;
}
/** A plan with its test cases in order and who stored its version (needs the plan aliased `tp`). */
export const testPlanColumns = `tp.id, tp.project_id, tp.name, tp.description, tp.retries, tp.created_at, tp.updated_at, tp.version,
  array(select pc.test_case_id from catalog.test_plan_cases pc where pc.plan_id = tp.id order by pc.position) as test_case_ids,
  ${changedByOf("test_plan_versions", "plan_id", "tp.id", "tp.version")}`;

export interface TestCaseRow {
  id: string;
  project_id: string;
  name: string;
  tags: string[];
  enabled: boolean;
  /** Only when selected (`withSteps`). */
  steps?: JsonValue[];
  /** A spec case's PlaywrightSpec as proto JSON, null for a case of steps; only when selected (`withSteps`). */
  playwright?: JsonValue | null;
  record_trace: boolean;
  retries: number;
  created_at: Date;
  updated_at: Date;
  version: number;
  updated_by: ChangedByRow | null;
}
/** A test case and who stored its version (needs the test case aliased `t`). */
export const testCaseColumns = (withSteps: boolean) =>
  `t.id, t.project_id, t.name, t.tags, t.enabled, t.record_trace, t.retries, t.created_at, t.updated_at, t.version,
   ${changedByOf("test_case_versions", "test_case_id", "t.id", "t.version")}${withSteps ? ", t.steps, t.playwright" : ""}`;

export interface VariableRow {
  id: string;
  project_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
  /** Whether a value is stored (an imported variable has none until it is set). */
  has_value: boolean;
}
export const variableColumns =
  "v.id, v.project_id, v.name, v.created_at, v.updated_at, v.value_ciphertext is not null as has_value";

const time = (date: Date) => timestampFromDate(date);

/** Unset when nobody was recorded (versions stored before versions were kept). */
export function changedByToProto(row: ChangedByRow | null): ChangedBy | undefined {
  if (row?.member_id)
    return create(ChangedBySchema, {
      kind: {
        case: "member",
        value: { memberId: row.member_id, displayName: row.name ?? "", email: row.email ?? "" },
      },
    });
  if (row?.operator !== null && row?.operator !== undefined)
    return create(ChangedBySchema, { kind: { case: "operator", value: { name: row.operator } } });
  return undefined;
}

export const organizationToProto = (row: OrganizationRow): Organization =>
  create(OrganizationSchema, { id: row.id, name: row.name, createdAt: time(row.created_at) });

export const memberToProto = (row: MemberRow): Member =>
  create(MemberSchema, {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    displayName: row.display_name,
    role: roleFromDb(row.role),
    state: row.removed_at ? MemberState.REMOVED : MemberState.ACTIVE,
    createdAt: time(row.created_at),
    rightsLostAt: row.rights_lost_at ? time(row.rights_lost_at) : undefined,
    removedAt: row.removed_at ? time(row.removed_at) : undefined,
  });

export const projectToProto = (row: ProjectRow): Project =>
  create(ProjectSchema, {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    description: row.description,
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
  });

export const environmentToProto = (row: EnvironmentRow): Environment =>
  create(EnvironmentSchema, {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    baseUrl: row.base_url,
    isDefault: row.is_default,
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
  });

export const testPlanToProto = (row: TestPlanRow): TestPlan =>
  create(TestPlanSchema, {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    description: row.description,
    testCaseIds: row.test_case_ids,
    testCaseCount: row.test_case_ids.length,
    ...(row.retries !== null && { retries: row.retries }),
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
    version: row.version,
    updatedBy: changedByToProto(row.updated_by),
  });

export const testCaseToProto = (row: TestCaseRow): TestCase =>
  create(TestCaseSchema, {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    tags: row.tags,
    enabled: row.enabled,
    steps: row.steps ? stepsFromStorage(row.steps) : [],
    ...(row.playwright && { playwright: playwrightFromStorage(row.playwright) }),
    recordTrace: row.record_trace,
    retries: row.retries,
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
    version: row.version,
    updatedBy: changedByToProto(row.updated_by),
  });

export const variableToProto = (row: VariableRow): Variable =>
  create(VariableSchema, {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
    hasValue: row.has_value,
  });
