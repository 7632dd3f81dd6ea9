// How each kind of object is printed: its columns for people, its JSON for scripts.
//
// JSON output is named like the services' responses: a list under its plural (`{"projects": [...]}`),
// one object under its singular (`{"project": {...}}`), each object in the canonical protobuf JSON
// mapping (see messageJson). Keys never carry their secret except in `key create`'s `secret`.
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import {
  type GrantCreditsResponse,
  GrantCreditsResponseSchema,
  type LedgerEntry,
  LedgerEntryKind,
  LedgerEntrySchema,
} from "@testrun/gen/testrun/billing/v1/billing_pb";
import {
  type CreateOrganizationResponse,
  CreateOrganizationResponseSchema,
  type Environment,
  EnvironmentSchema,
  type ImportContentResponse,
  ImportContentResponseSchema,
  type ImportedItem,
  ItemOutcome,
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
import {
  type ApiKey,
  ApiKeySchema,
  type CreateKeyResponse,
  CreateKeyResponseSchema,
  KeyState,
} from "@testrun/gen/testrun/keys/v1/keys_pb";
import { roleName } from "./arguments.js";
import { messageJson, table, time } from "./output.js";

export interface ListView<T> {
  /** What a list of them is called ("no projects"). */
  plural: string;
  table(items: readonly T[]): string;
  /** `{ <plural>: [...] }` */
  listJson(items: readonly T[]): Record<string, unknown>;
  /** `{ <field>: {...} }` */
  oneJson(item: T, field: string): Record<string, unknown>;
}

function view<D extends DescMessage>(
  schema: D,
  plural: string,
  header: readonly string[],
  row: (item: MessageShape<D>) => string[],
  jsonKey = plural.replace(/ ([a-z])/g, (_, letter: string) => letter.toUpperCase()),
): ListView<MessageShape<D>> {
  return {
    plural,
    table: (items) => table(header, items.map(row)),
    listJson: (items) => ({ [jsonKey]: items.map((item) => messageJson(schema, item)) }),
    oneJson: (item, field) => ({ [field]: messageJson(schema, item) }),
  };
}

const lowerEnum = (names: Record<number, string>, value: number) =>
  (names[value] ?? "unspecified").toLowerCase().replaceAll("_", " ");

export const organizationView = {
  ...view(OrganizationSchema, "organizations", ["ID", "NAME", "CREATED"], (org: Organization) => [
    org.id,
    org.name,
    time(org.createdAt),
  ]),
  /** `{ organization, owner? }`, as CreateOrganization answers. */
  responseJson: (response: CreateOrganizationResponse) =>
    messageJson(CreateOrganizationResponseSchema, response),
};

export const memberView = view(
  MemberSchema,
  "members",
  ["ID", "EMAIL", "NAME", "ROLE", "STATE", "CREATED", "RIGHTS LOST"],
  (member: Member) => [
    member.id,
    member.email,
    member.displayName,
    roleName(member.role),
    lowerEnum(MemberState, member.state),
    time(member.createdAt),
    time(member.rightsLostAt),
  ],
);

export const projectView = view(
  ProjectSchema,
  "projects",
  ["ID", "NAME", "ORGANIZATION", "CREATED"],
  (project: Project) => [project.id, project.name, project.organizationId, time(project.createdAt)],
);

export const environmentView = view(
  EnvironmentSchema,
  "environments",
  ["ID", "NAME", "BASE URL", "DEFAULT", "CREATED"],
  (environment: Environment) => [
    environment.id,
    environment.name,
    environment.baseUrl,
    environment.isDefault ? "yes" : "",
    time(environment.createdAt),
  ],
);

export const testPlanView = view(
  TestPlanSchema,
  "test plans",
  ["ID", "NAME", "TEST CASES", "CREATED"],
  (plan: TestPlan) => [plan.id, plan.name, String(plan.testCaseCount), time(plan.createdAt)],
);

export const testCaseView = view(
  TestCaseSchema,
  "test cases",
  ["ID", "NAME", "TAGS", "ENABLED", "CREATED"],
  (testCase: TestCase) => [
    testCase.id,
    testCase.name,
    testCase.tags.join(",") || "-",
    testCase.enabled ? "yes" : "no",
    time(testCase.createdAt),
  ],
);

export const variableView = view(
  VariableSchema,
  "variables",
  ["ID", "NAME", "VALUE", "CREATED", "UPDATED"],
  (variable: Variable) => [
    variable.id,
    variable.name,
    // Never the value itself: whether there is one (an imported variable has none until set).
    variable.hasValue ? "set" : "NOT SET",
    time(variable.createdAt),
    time(variable.updatedAt),
  ],
);

export const keyView = {
  ...view(
    ApiKeySchema,
    "keys",
    ["ID", "NAME", "PREFIX", "STATE", "CREATOR", "CREATED", "LAST USED", "EXPIRES"],
    (key: ApiKey) => [
      key.id,
      key.name,
      `${key.displayPrefix}…`,
      lowerEnum(KeyState, key.state),
      key.creatorMemberId,
      time(key.createdAt),
      time(key.lastUsedAt),
      key.expiresAt ? time(key.expiresAt) : "never",
    ],
  ),
  /** `{ key, secret }`, as CreateKey answers: the one output that carries a secret. */
  createdJson: (response: CreateKeyResponse) => messageJson(CreateKeyResponseSchema, response),
};

export const ledgerView = {
  ...view(
    LedgerEntrySchema,
    "ledger entries",
    ["ID", "TIME", "KIND", "AMOUNT", "BALANCE", "RUN", "REASON"],
    (entry: LedgerEntry) => [
      entry.id,
      time(entry.createdAt),
      lowerEnum(LedgerEntryKind, entry.kind),
      entry.amount > 0n ? `+${entry.amount}` : String(entry.amount),
      String(entry.balanceAfter),
      entry.runId ?? "-",
      entry.reason,
    ],
    "entries",
  ),
  /** `{ entry, balance }`, as GrantCredits answers. */
  grantJson: (response: GrantCreditsResponse) => messageJson(GrantCreditsResponseSchema, response),
};

const outcomeText = (item: ImportedItem) =>
  item.outcome === ItemOutcome.CREATED
    ? "new"
    : item.outcome === ItemOutcome.CHANGED
      ? `changed: ${item.changedFields.join(", ")}`
      : item.outcome === ItemOutcome.UNCHANGED
        ? "unchanged"
        : "-";

/** `content import`: one row per item of the document, its JSON the catalog's response. */
export const importView = {
  table: (items: readonly ImportedItem[]) =>
    table(
      ["ITEM", "NAME", "OUTCOME", "ID"],
      items.map((item) => [item.path, item.name, outcomeText(item), item.id || "-"]),
    ),
  json: (response: ImportContentResponse) => messageJson(ImportContentResponseSchema, response),
};

/**
 * What an import did (or a dry run would do), in one line; then, when the document came from
 * another project or variables are still without a value, a line for each.
 */
export function importSummary(result: ImportContentResponse): string {
  const counts = (items: readonly ImportedItem[], what: string) => {
    const of = (outcome: ItemOutcome) => items.filter((item) => item.outcome === outcome).length;
    return `${what}: ${of(ItemOutcome.CREATED)} ${result.applied ? "created" : "to create"}, ${of(ItemOutcome.CHANGED)} ${result.applied ? "changed" : "to change"}, ${of(ItemOutcome.UNCHANGED)} unchanged`;
  };
  const settings = [
    result.environments.length > 0 && counts(result.environments, "environments"),
    result.variables.length > 0 && counts(result.variables, "variables"),
  ].filter((part) => part !== false);
  const others = `${result.otherTestCases} test case${result.otherTestCases === 1 ? "" : "s"} and ${result.otherTestPlans} test plan${result.otherTestPlans === 1 ? "" : "s"} of the project are not in the document and stay as they are`;
  const lines = [
    `${result.applied ? "imported" : "dry run, nothing written"}: ${[...settings, counts(result.testCases, "test cases"), counts(result.testPlans, "test plans")].join("; ")}. ${others}.`,
  ];
  if (result.fromOtherProject)
    lines.push("the document comes from another project: its ids were not used, items were matched by name");
  const unset = result.variablesWithoutValue;
  if (unset.length > 0)
    lines.push(
      `${unset.length === 1 ? "1 variable has" : `${unset.length} variables have`} no value yet${result.applied ? "" : " after this import"}: ${unset.join(", ")}; set each with \`testrunctl var set NAME\` (steps naming one fail until it is set)`,
    );
  return lines.join("\n");
}
