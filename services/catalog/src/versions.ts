import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { changedByName } from "@testrun/content-file";
import type { Actor, ChangedBy } from "@testrun/gen/testrun/common/v1/actor_pb";
import { EditConflictSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import type { Granted } from "./access.js";
import { KEPT_VERSIONS } from "./db/entities.js";
import { invalid, notFound, type Violations } from "./errors.js";
import { type ChangedByRow, changedByToProto } from "./rows.js";
import { type Sql, textArray } from "./sql.js";

// Versions of test cases and test plans (catalog.proto, TestCase.version): who stores one, the
// refusal of a save made on another version, and which versions are kept.

export { KEPT_VERSIONS };

/** Who stores a version: the `changed_by_*` columns of a *_versions row. */
export interface Changer {
  memberId: string | null;
  operator: string | null;
}

/**
 * The changer for an actor that passed the EDIT check: the member, or the operator by the name it
 * gave. (An API key never gets EDIT; were it to, its creator would be the one named.)
 */
export function changerOf(grant: Granted, actor: Actor | undefined): Changer {
  if (grant.kind === "operator")
    return { memberId: null, operator: actor?.kind.case === "operator" ? actor.kind.value.name : "" };
  return { memberId: grant.member?.id ?? null, operator: null };
}

/** `expected_version` (or `version`) when set: 1 or more. */
export function checkVersion(value: number | undefined, field: string, violations: Violations): void {
  if (value !== undefined && value < 1) violations.add(field, `must be 1 or more (got ${value})`);
}

/** "Ana (ana@example.com)", "operator alice", "an operator", "someone (not recorded)". */
export const describeChanger = (changedBy: ChangedBy | undefined): string =>
  changedByName(changedBy) || "someone (not recorded)";

/** The current version of an item, as a conflict reports it. */
export interface CurrentVersion {
  version: number;
  updated_at: Date;
  updated_by: ChangedByRow | null;
}

/**
 * ABORTED with an EditConflict detail: a save or delete of `what` ("test case tc_…") made on
 * version `expected` while it is at `current`. Nothing was written.
 */
export function editConflict(what: string, expected: number, current: CurrentVersion): ConnectError {
  const changedBy = changedByToProto(current.updated_by);
  // A version from the future was never read from the catalog: say so, rather than name someone
  // who changed nothing since.
  const message =
    expected > current.version
      ? `${what} has no version ${expected}: it is at version ${current.version}, stored by ` +
        `${describeChanger(changedBy)} at ${current.updated_at.toISOString()}; read it again and save on that version`
      : `${what} was changed by ${describeChanger(changedBy)} at ${current.updated_at.toISOString()}; ` +
        `this save was made on version ${expected}, it is now version ${current.version}`;
  return new ConnectError(message, Code.Aborted, undefined, [
    {
      desc: EditConflictSchema,
      value: {
        expectedVersion: expected,
        currentVersion: current.version,
        changedBy,
        changedAt: timestampFromDate(current.updated_at),
      },
    },
  ]);
}

/** The conflict when `expected` is set and is not the current version; undefined otherwise. */
export const conflictIf = (what: string, expected: number | undefined, current: CurrentVersion) =>
  expected !== undefined && expected !== current.version ? editConflict(what, expected, current) : undefined;

/** The oldest version still kept when `current` is the latest (versions are numbered without gaps). */
export const oldestKept = (current: number) => Math.max(1, current - KEPT_VERSIONS + 1);

/** NOT_FOUND for a version of `what` that it never had or that is no longer kept. */
export function versionMissing(what: string, version: number, current: number): ConnectError {
  if (version > current) return notFound(`${what} has no version ${version}: it is at version ${current}`);
  return notFound(
    `version ${version} of ${what} is no longer kept: the catalog keeps the latest ${KEPT_VERSIONS} versions ` +
      `(now ${oldestKept(current)} to ${current})`,
  );
}

/** INVALID_ARGUMENT for a `version` to read below 1 (reads have no FieldViolations to collect). */
export function checkReadVersion(version: number | undefined): void {
  if (version !== undefined && version < 1) throw invalid(`version must be 1 or more (got ${version})`);
}

/**
 * Keeps the test cases' current versions (`ids`, as their rows now are) as stored by `changer`,
 * and drops their versions older than the latest KEPT_VERSIONS: one statement.
 */
export async function recordCaseVersions(sql: Sql, ids: readonly string[], changer: Changer): Promise<void> {
  await sql.all(
    `with kept as (
       insert into catalog.test_case_versions
         (test_case_id, version, name, tags, enabled, steps, playwright, record_trace, retries, changed_at, changed_by_member_id, changed_by_operator)
       select t.id, t.version, t.name, t.tags, t.enabled, t.steps, t.playwright, t.record_trace, t.retries, t.updated_at, ?, ?
       from catalog.test_cases t where t.id = any(?::text[])
       returning test_case_id, version)
     delete from catalog.test_case_versions v using kept
     where v.test_case_id = kept.test_case_id and v.version <= kept.version - ?`,
    [changer.memberId, changer.operator, textArray(ids), KEPT_VERSIONS],
  );
}

/** As recordCaseVersions, for test plans (their test cases in order as they are now). */
export async function recordPlanVersions(sql: Sql, ids: readonly string[], changer: Changer): Promise<void> {
  await sql.all(
    `with kept as (
       insert into catalog.test_plan_versions
         (plan_id, version, name, description, test_case_ids, retries, changed_at, changed_by_member_id, changed_by_operator)
       select tp.id, tp.version, tp.name, tp.description,
         array(select pc.test_case_id from catalog.test_plan_cases pc where pc.plan_id = tp.id order by pc.position),
         tp.retries, tp.updated_at, ?, ?
       from catalog.test_plans tp where tp.id = any(?::text[])
       returning plan_id, version)
     delete from catalog.test_plan_versions v using kept
     where v.plan_id = kept.plan_id and v.version <= kept.version - ?`,
    [changer.memberId, changer.operator, textArray(ids), KEPT_VERSIONS],
  );
}
