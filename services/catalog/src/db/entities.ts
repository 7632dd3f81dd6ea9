import { defineEntity, p } from "@mikro-orm/core";

// Ids are opaque prefixed strings made by `newId` (org_, mem_, prj_, env_, pln_, tc_, var_).
// Foreign keys stay inside this schema. Rows owned by a project go with it (on delete cascade), so
// DeleteProject is one statement. Field names follow proto/testrun/catalog/v1/catalog.proto; the
// length checks are backstops for the limits it states (lengths in code points, as char_length).

/** `retries` is unset or 0 to 3 (TestCase.retries, TestPlan.retries). */
const retriesCheck = (table: string) => ({
  name: `${table}_retries_range`,
  expression: "retries >= 0 and retries <= 3",
});

/** `column` is 1 to 200 characters: the proto's rule for every name. */
const nameCheck = (table: string, column = "name") => ({
  name: `${table}_${column}_length`,
  expression: `char_length(${column}) >= 1 and char_length(${column}) <= 200`,
});

/**
 * How many versions of one test case or test plan are kept (the latest ones, the current included;
 * catalog.proto, TestCase.version). Storing a newer one deletes the oldest in the same transaction.
 */
export const KEPT_VERSIONS = 100;

/**
 * Who stored a version (common/v1/actor.proto, ChangedBy): a member, or an operator by the name it
 * gave ('' when none); both null for version 1 of items created before versions were kept.
 * Members are never deleted (removal keeps the row), so the id always finds the name to show.
 */
const changedBy = () => ({
  changedByMemberId: p.text().nullable(),
  changedByOperator: p.text().nullable(),
});
const changedByCheck = (table: string) => ({
  name: `${table}_changed_by_one_kind`,
  expression: "changed_by_member_id is null or changed_by_operator is null",
});

/** Descriptions may be empty and hold at most 2000 characters. */
const descriptionCheck = (table: string) => ({
  name: `${table}_description_length`,
  expression: "char_length(description) <= 2000",
});

export const Organization = defineEntity({
  name: "Organization",
  tableName: "organizations",
  properties: {
    id: p.text().primary(),
    name: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    /**
     * How many of its projects were granted NEW_PROJECT_CREDITS. Only ever counts up (deleting a
     * project gives nothing back), so an Admin cannot farm credits by creating and deleting
     * projects: grants stop at NEW_PROJECT_GRANTS_PER_ORGANIZATION.
     */
    newProjectGrants: p.integer().default(0),
  },
  indexes: [
    // ListOrganizations: oldest first, paged.
    { name: "organizations_created_index", properties: ["createdAt", "id"] },
  ],
  checks: [
    nameCheck("organizations"),
    { name: "organizations_new_project_grants_not_negative", expression: "new_project_grants >= 0" },
  ],
});

/** The four roles, highest first: Owner > Admin > Editor > Viewer (docs/rest-api.md, "Authentication"). */
export const MEMBER_ROLES = ["owner", "admin", "editor", "viewer"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/**
 * A membership of one person in one organization. Removal keeps the row (`removedAt`); adding the
 * same email again reactivates it (same id). `rightsLostAt` is the last time the member lost
 * Editor-or-above rights (removal, or a change to Viewer): a key created before it is dead for good.
 */
export const Member = defineEntity({
  name: "Member",
  tableName: "members",
  properties: {
    id: p.text().primary(),
    organizationId: p.manyToOne(Organization).mapToPk().joinColumn("organization_id"),
    email: p.text(),
    displayName: p.text(),
    /** Current role; for a removed member, the role it had when removed. */
    role: p.enum(MEMBER_ROLES),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** Null while active. */
    removedAt: p.datetime().nullable(),
    /** Null if the member never lost Editor-or-above rights; never cleared. */
    rightsLostAt: p.datetime().nullable(),
  },
  uniques: [
    {
      // One member per address and organization, removed ones included: AddMember finds a removed
      // member by it to reactivate the same row. Emails are stored normalised (validate.ts,
      // normalizeEmail), so "Ann@x.io" and "ann@x.io" are one address without lower().
      name: "members_organization_email_unique",
      properties: ["organizationId", "email"],
    },
  ],
  indexes: [
    // ListMembers: an organization's members oldest first, paged.
    { name: "members_organization_created_index", properties: ["organizationId", "createdAt", "id"] },
    // FindMembersByEmail: who a person signing in to the console is, on every console call.
    {
      name: "members_active_email_index",
      expression: (c, t, n) => `create index "${n}" on ${t} ("${c.email}") where "${c.removedAt}" is null`,
    },
  ],
  checks: [
    nameCheck("members", "display_name"),
    { name: "members_email_length", expression: "char_length(email) >= 1 and char_length(email) <= 320" },
  ],
});

export const Project = defineEntity({
  name: "Project",
  tableName: "projects",
  properties: {
    id: p.text().primary(),
    organizationId: p.manyToOne(Organization).mapToPk().joinColumn("organization_id"),
    name: p.text(),
    description: p.text().default(""),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [
    {
      // Project names are unique in an organization ignoring case (ALREADY_EXISTS on a clash).
      name: "projects_organization_name_unique",
      expression: (c, t, n) =>
        `create unique index "${n}" on ${t} ("${c.organizationId}", lower("${c.name}"))`,
    },
  ],
  indexes: [
    // ListProjects: an organization's projects oldest first, paged.
    { name: "projects_organization_created_index", properties: ["organizationId", "createdAt", "id"] },
  ],
  checks: [nameCheck("projects"), descriptionCheck("projects")],
});

/**
 * Names are deliberately not unique: a name matching several environments is refused (409
 * ambiguous_name) when a run starts, as the spec says.
 */
export const Environment = defineEntity({
  name: "Environment",
  tableName: "environments",
  properties: {
    id: p.text().primary(),
    projectId: p.manyToOne(Project).mapToPk().joinColumn("project_id").deleteRule("cascade"),
    name: p.text(),
    /** Absolute http(s) URL without query, fragment or trailing slash; at most 2048 characters. */
    baseUrl: p.text(),
    isDefault: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  indexes: [
    // A project's environments oldest first (GET /v1/environments, "else the oldest"), and
    // resolving an environment name within the project.
    { name: "environments_project_created_index", properties: ["projectId", "createdAt", "id"] },
  ],
  uniques: [
    // At most one default environment per project: a new default must clear the old one first,
    // in the same transaction. Also finds the default in one lookup.
    { name: "environments_one_default_per_project", properties: ["projectId"], where: "is_default" },
  ],
  checks: [
    nameCheck("environments"),
    { name: "environments_base_url_length", expression: "char_length(base_url) <= 2048" },
  ],
});

export const TestPlan = defineEntity({
  name: "TestPlan",
  tableName: "test_plans",
  properties: {
    id: p.text().primary(),
    projectId: p.manyToOne(Project).mapToPk().joinColumn("project_id").deleteRule("cascade"),
    name: p.text(),
    description: p.text().default(""),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    /** 1 at creation, +1 on every stored change; its snapshot is the TestPlanVersion of that number. */
    version: p.integer().default(1),
    /** TestPlan.retries: null when the plan sets none (each test case's own apply). */
    retries: p.integer().nullable(),
  },
  indexes: [
    // A project's plans oldest first (GET /v1/test-plans), and resolving a plan name within the project.
    { name: "test_plans_project_created_index", properties: ["projectId", "createdAt", "id"] },
  ],
  checks: [
    nameCheck("test_plans"),
    descriptionCheck("test_plans"),
    { name: "test_plans_version_positive", expression: "version >= 1" },
    retriesCheck("test_plans"),
  ],
});

/** Free-form here; the catalog validates the steps (step.proto) on write. */
export type TestCaseStep = Record<string, unknown>;

/** A PlaywrightSpec's proto JSON (playwright.proto); the catalog validates it on write. */
export type TestCasePlaywright = Record<string, unknown>;

/**
 * A test case holds steps or a Playwright spec, never both nor neither (TestCase.playwright): the
 * spec's column is null exactly when the steps are not empty.
 */
const stepsOrSpecCheck = (table: string) => ({
  name: `${table}_steps_or_playwright`,
  expression: "(playwright is null) = (jsonb_array_length(steps) > 0)",
});

export const TestCase = defineEntity({
  name: "TestCase",
  tableName: "test_cases",
  properties: {
    id: p.text().primary(),
    projectId: p.manyToOne(Project).mapToPk().joinColumn("project_id").deleteRule("cascade"),
    name: p.text(),
    /** Stored and returned as given. */
    tags: p.array().default([]),
    /**
     * `tags` lower-cased, kept by the trigger `set_tags_lower` on every insert and update
     * (whatever the application writes here is overwritten). Tag matching ignores case by comparing
     * lower-cased input with it: `tags_lower && $1::text[]`. Not loaded unless asked for.
     */
    tagsLower: p.array().default([]).lazy().hidden(),
    enabled: p.boolean().default(true),
    /** The steps, in order (1 to 100); empty for a Playwright spec case. */
    steps: p.json<TestCaseStep[]>(),
    /** For a Playwright spec case, its spec and helper files (TestCase.playwright); else null. */
    playwright: p.json<TestCasePlaywright>().nullable(),
    /** Record a Playwright trace of every execution, not only of failed ones (TestCase.record_trace). */
    recordTrace: p.boolean().default(false),
    /** How many times a failed attempt is retried in a run (TestCase.retries). */
    retries: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    /**
     * 1 at creation, +1 on every stored change; its snapshot is the TestCaseVersion of that number.
     * A save made on another version is refused by the update's own `where version = ?`.
     */
    version: p.integer().default(1),
  },
  indexes: [
    // GET /v1/test-cases: a project's cases oldest first, at most 500 (name search filters these).
    { name: "test_cases_project_created_index", properties: ["projectId", "createdAt", "id"] },
    // Tag filters and tag-selected runs: `tags_lower && $1` is answered from this index.
    { name: "test_cases_tags_lower_index", properties: ["tagsLower"], type: "gin" },
    // A content import matches a spec case by its spec's path within the project.
    {
      name: "test_cases_spec_path_index",
      expression: (c, t, n) =>
        `create index "${n}" on ${t} ("${c.projectId}", (("${c.playwright}" -> 'spec') ->> 'path')) where "${c.playwright}" is not null`,
    },
  ],
  triggers: [
    {
      // A generated column cannot lower-case an array (that needs a subquery), so a trigger keeps it.
      name: "set_tags_lower",
      timing: "before",
      events: ["insert", "update"],
      body: "new.tags_lower := array(select lower(t) from unnest(new.tags) as t); return new;",
    },
  ],
  checks: [
    nameCheck("test_cases"),
    { name: "test_cases_tags_count", expression: "cardinality(tags) <= 50" },
    { name: "test_cases_steps_is_array", expression: "jsonb_typeof(steps) = 'array'" },
    { name: "test_cases_version_positive", expression: "version >= 1" },
    retriesCheck("test_cases"),
    stepsOrSpecCheck("test_cases"),
  ],
});

/**
 * A stored version of a test case: what it was (name, tags, enabled, steps or spec, record_trace), who stored it and
 * when. The current version is always kept; at most KEPT_VERSIONS in all. A run's test names the
 * version it ran (runs' test_results.test_case_version), so it can be read back exactly.
 */
export const TestCaseVersion = defineEntity({
  name: "TestCaseVersion",
  tableName: "test_case_versions",
  properties: {
    // The primary key (test_case_id, version) serves reading one version, pruning the oldest and
    // the cascade when the test case is deleted.
    testCaseId: p.manyToOne(TestCase).mapToPk().joinColumn("test_case_id").deleteRule("cascade").primary(),
    version: p.integer().primary(),
    name: p.text(),
    tags: p.array(),
    enabled: p.boolean(),
    steps: p.json<TestCaseStep[]>(),
    playwright: p.json<TestCasePlaywright>().nullable(),
    recordTrace: p.boolean().default(false),
    retries: p.integer().default(0),
    changedAt: p.datetime(),
    ...changedBy(),
  },
  checks: [
    { name: "test_case_versions_version_positive", expression: "version >= 1" },
    changedByCheck("test_case_versions"),
    stepsOrSpecCheck("test_case_versions"),
  ],
});

/** A stored version of a test plan (name, description, its test cases in order), as TestCaseVersion. */
export const TestPlanVersion = defineEntity({
  name: "TestPlanVersion",
  tableName: "test_plan_versions",
  properties: {
    planId: p.manyToOne(TestPlan).mapToPk().joinColumn("plan_id").deleteRule("cascade").primary(),
    version: p.integer().primary(),
    name: p.text(),
    description: p.text(),
    /** As the plan listed them then; a test case deleted since stays named here. */
    testCaseIds: p.array(),
    retries: p.integer().nullable(),
    changedAt: p.datetime(),
    ...changedBy(),
  },
  checks: [
    { name: "test_plan_versions_version_positive", expression: "version >= 1" },
    changedByCheck("test_plan_versions"),
  ],
});

/** A plan's ordered list of test cases: entry `position` (0, 1, …; gaps allowed) of plan `planId`. */
export const TestPlanCase = defineEntity({
  name: "TestPlanCase",
  tableName: "test_plan_cases",
  properties: {
    // The primary key (plan_id, position) serves reading a plan's cases in order and counting them.
    planId: p.manyToOne(TestPlan).mapToPk().joinColumn("plan_id").deleteRule("cascade").primary(),
    position: p.integer().primary(),
    // Deleting a test case takes it out of every plan (DeleteTestCase). It must cascade anyway:
    // with "no action", deleting a project fails whenever one of its plans lists a case.
    testCaseId: p.manyToOne(TestCase).mapToPk().joinColumn("test_case_id").deleteRule("cascade"),
  },
  uniques: [
    // A plan lists a test case at most once.
    { name: "test_plan_cases_plan_test_case_unique", properties: ["planId", "testCaseId"] },
  ],
  indexes: [
    // Deleting a test case finds its plan entries (the cascade) without scanning.
    { name: "test_plan_cases_test_case_index", properties: ["testCaseId"] },
  ],
  checks: [{ name: "test_plan_cases_position_not_negative", expression: "position >= 0" }],
});

/**
 * A project variable. The value is encrypted with AES-256-GCM under a key from the environment:
 * ciphertext, 12-byte IV (nonce) and 16-byte authentication tag; it is never stored in clear.
 */
export const Variable = defineEntity({
  name: "Variable",
  tableName: "variables",
  properties: {
    id: p.text().primary(),
    projectId: p.manyToOne(Project).mapToPk().joinColumn("project_id").deleteRule("cascade"),
    /** As written in `{{NAME}}`; stored as given, unique in the project ignoring case. */
    name: p.text(),
    /** All three null: a variable without a value yet (ImportContent creates them by name only). */
    valueCiphertext: p.blob().nullable(),
    valueIv: p.blob().nullable(),
    valueTag: p.blob().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [
    {
      // One variable per name in a project, ignoring case (ALREADY_EXISTS on a clash).
      name: "variables_project_name_unique",
      expression: (c, t, n) => `create unique index "${n}" on ${t} ("${c.projectId}", lower("${c.name}"))`,
    },
  ],
  indexes: [
    // ListVariables and GetVariableValues: a project's variables oldest first.
    { name: "variables_project_created_index", properties: ["projectId", "createdAt", "id"] },
  ],
  checks: [
    { name: "variables_name_format", expression: "name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'" },
    // GCM's standard nonce and full-length tag; anything else is a bug in the encryption code.
    { name: "variables_value_iv_length", expression: "octet_length(value_iv) = 12" },
    { name: "variables_value_tag_length", expression: "octet_length(value_tag) = 16" },
    // A value is whole or absent: never a ciphertext without its nonce and tag.
    {
      name: "variables_value_whole",
      expression:
        "(value_ciphertext is null) = (value_iv is null) and (value_iv is null) = (value_tag is null)",
    },
  ],
});

/**
 * What another service must be told (KeysService.DisableKeysOfMember / RevokeProjectKeys,
 * RunsService.PurgeProjectArtifacts), or asked (BillingService.GrantCredits: a new project's
 * credits, NEW_PROJECT_CREDITS).
 */
export const NOTIFICATION_KINDS = [
  "disable_member_keys",
  "revoke_project_keys",
  "purge_project_artifacts",
  "grant_new_project_credits",
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/**
 * Outbox of calls another service has not acknowledged yet (outbox.ts); named after its first use,
 * the keys service. A loss of rights (or a deleted project) writes its rows in the same transaction
 * as the change, so the notification cannot be lost: the catalog delivers it right after the commit
 * and, while the service is unreachable, retries with backoff until it succeeds; the row is deleted
 * on success. Every call is idempotent, so a repeated delivery is harmless.
 */
export const KeyNotification = defineEntity({
  name: "KeyNotification",
  tableName: "key_notifications",
  properties: {
    id: p.uuid().primary(),
    kind: p.enum(NOTIFICATION_KINDS),
    /** disable_member_keys: the member who lost rights, and when (its rights_lost_at). */
    memberId: p.text().nullable(),
    lostAt: p.datetime().nullable(),
    /** revoke_project_keys, purge_project_artifacts: the deleted project; grant_new_project_credits: the new one. */
    projectId: p.text().nullable(),
    /**
     * grant_new_project_credits: the credits, as NEW_PROJECT_CREDITS said when the project was
     * created (a later change of the setting changes no grant already on its way).
     */
    credits: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** Failed deliveries so far; sets the backoff. */
    attempts: p.integer().default(0),
    /** When the retry loop may try next. */
    nextAttemptAt: p.datetime(),
    /** The gRPC code of the last failure (e.g. UNAVAILABLE), for operators; never a message. */
    lastError: p.text().nullable(),
  },
  indexes: [
    // The retry loop's scan: due rows first.
    { name: "key_notifications_next_attempt_index", properties: ["nextAttemptAt"] },
  ],
  checks: [
    {
      name: "key_notifications_fields_match_kind",
      expression:
        "(kind = 'disable_member_keys' and member_id is not null and lost_at is not null) or (kind in ('revoke_project_keys', 'purge_project_artifacts') and project_id is not null) or (kind = 'grant_new_project_credits' and project_id is not null and credits > 0)",
    },
  ],
});

export const entities = [
  Organization,
  Member,
  Project,
  Environment,
  TestPlan,
  TestCase,
  TestPlanCase,
  TestCaseVersion,
  TestPlanVersion,
  Variable,
  KeyNotification,
];
