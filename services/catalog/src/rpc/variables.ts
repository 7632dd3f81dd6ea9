import type { HandlerContext } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { callerIdentity, newId } from "@testrun/kit";
import { authorizeProject } from "../access.js";
import type { VariableCipher } from "../cipher.js";
import { alreadyExists, denied, failedPrecondition, invalid, notFound, Violations } from "../errors.js";
import { type VariableRow, variableColumns, variableToProto } from "../rows.js";
import { type Sql, textArray, violatesUnique } from "../sql.js";
import { checkVariableName } from "../validate.js";
import type { Deps, Handlers } from "./context.js";

// Variable values are secrets. They enter through CreateVariable / UpdateVariable, are sealed at
// once, and leave only through GetVariableValues and GetVariableValuesBatch to the executor
// identity. No handler here logs a request, and no error message or detail ever quotes a value.

const maxValueBytes = 8192;
/** GetVariableValuesBatch's most tests in one call: RunsService.ClaimTests' largest batch. */
const maxBatch = 100;

const missing = (id: string) => notFound(`variable ${id || "(empty id)"} not found in this project`);
const nameTaken = (name: string) =>
  alreadyExists(`the project already has a variable named ${name} (names are compared ignoring case)`);

/** Checks a value's size; the message never quotes it. */
function checkValue(value: string, violations: Violations): void {
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes < 1 || bytes > maxValueBytes)
    violations.add("value", `must be 1 to ${maxValueBytes} bytes of UTF-8 (got ${bytes} bytes)`);
}

function requireCipher(cipher: VariableCipher | undefined): VariableCipher {
  if (!cipher)
    throw failedPrecondition(
      "variable values cannot be stored or read: the catalog has no VARIABLES_KEY configured",
    );
  return cipher;
}

async function findVariable(sql: Sql, projectId: string, id: string): Promise<VariableRow> {
  const row = await sql.one<VariableRow>(
    `select ${variableColumns} from catalog.variables v where v.project_id = ? and v.id = ?`,
    [projectId, id],
  );
  if (!row) throw missing(id);
  return row;
}

/** The executor's token is the only credential that unlocks values; operators and the gateway (the service token) are refused whatever actor they claim. */
function requireExecutor(ctx: HandlerContext): void {
  if (callerIdentity(ctx) !== "executor") throw denied("only executors may read variable values");
}

type SealedRow = VariableRow & { value_ciphertext: Buffer; value_iv: Buffer; value_tag: Buffer };

/**
 * CreateVariable, GetVariable, ListVariables, UpdateVariable, DeleteVariable, GetVariableValues,
 * GetVariableValuesBatch.
 */
export function variableHandlers({ db, cipher, logger, variablesGrants, variableReads }: Deps): Handlers {
  /**
   * The decrypted values of each project of `projectIds` (distinct), in their order, in one read
   * whatever their number; NOT_FOUND for the first that does not exist.
   */
  async function readValues(
    projectIds: string[],
  ): Promise<{ projectId: string; values: Record<string, string>; count: number }[]> {
    const open = requireCipher(cipher);
    const ids = textArray(projectIds);
    const rows = await db.read(async (sql) => {
      const projects = await sql.all<{ id: string }>(
        "select id from catalog.projects where id = any(?::text[])",
        [ids],
      );
      const found = new Set(projects.map((project) => project.id));
      const missingProject = projectIds.find((id) => !found.has(id));
      if (missingProject !== undefined) throw notFound(`project ${missingProject || "(empty id)"} not found`);
      // A variable without a value yet (imported by name) is left out: a step naming it fails
      // as for an unknown variable.
      return sql.all<SealedRow>(
        `select ${variableColumns}, v.value_ciphertext, v.value_iv, v.value_tag from catalog.variables v
         where v.project_id = any(?::text[]) and v.value_ciphertext is not null order by v.created_at, v.id`,
        [ids],
      );
    });
    const read = new Map(
      projectIds.map((projectId) => [
        projectId,
        { projectId, values: {} as Record<string, string>, count: 0 },
      ]),
    );
    for (const row of rows) {
      const project = read.get(row.project_id);
      if (!project) continue;
      project.values[row.name] = open.open(
        { ciphertext: row.value_ciphertext, iv: row.value_iv, tag: row.value_tag },
        row.project_id,
        row.id,
      );
      project.count++;
    }
    return [...read.values()];
  }

  return {
    async createVariable(req) {
      const violations = new Violations();
      const name = checkVariableName(req.name, "name", violations);
      checkValue(req.value, violations);
      try {
        const row = await db.write(async (sql) => {
          const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
          violations.check();
          const id = newId("var");
          const sealed = requireCipher(cipher).seal(req.value, project.id, id);
          const now = new Date();
          return sql.one<VariableRow>(
            `insert into catalog.variables as v (id, project_id, name, value_ciphertext, value_iv, value_tag, created_at, updated_at)
             values (?, ?, ?, ?, ?, ?, ?, ?) returning ${variableColumns}`,
            [id, project.id, name, sealed.ciphertext, sealed.iv, sealed.tag, now, now],
          );
        });
        return { variable: variableToProto(row as VariableRow) };
      } catch (error) {
        if (violatesUnique(error, "variables_project_name_unique")) throw nameTaken(name);
        throw error;
      }
    },

    async getVariable(req) {
      const row = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ_SETTINGS);
        return findVariable(sql, project.id, req.variableId);
      });
      return { variable: variableToProto(row) };
    },

    async listVariables(req) {
      const rows = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ_SETTINGS);
        return sql.all<VariableRow>(
          `select ${variableColumns} from catalog.variables v where v.project_id = ? order by v.created_at, v.id`,
          [project.id],
        );
      });
      return { variables: rows.map(variableToProto) };
    },

    async updateVariable(req) {
      const violations = new Violations();
      const name = req.name === undefined ? undefined : checkVariableName(req.name, "name", violations);
      if (req.value !== undefined) checkValue(req.value, violations);
      try {
        const row = await db.write(async (sql) => {
          const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
          const current = await findVariable(sql, project.id, req.variableId);
          violations.check();
          if (name === undefined && req.value === undefined) return current;
          const sealed =
            req.value === undefined
              ? undefined
              : requireCipher(cipher).seal(req.value, project.id, current.id);
          return sql.one<VariableRow>(
            `update catalog.variables v set name = coalesce(?, v.name),
               value_ciphertext = coalesce(?, v.value_ciphertext), value_iv = coalesce(?, v.value_iv),
               value_tag = coalesce(?, v.value_tag), updated_at = ?
             where v.id = ? returning ${variableColumns}`,
            [
              name ?? null,
              sealed?.ciphertext ?? null,
              sealed?.iv ?? null,
              sealed?.tag ?? null,
              new Date(),
              current.id,
            ],
          );
        });
        return { variable: variableToProto(row as VariableRow) };
      } catch (error) {
        if (name !== undefined && violatesUnique(error, "variables_project_name_unique"))
          throw nameTaken(name);
        throw error;
      }
    },

    async deleteVariable(req) {
      await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const deleted = await sql.all(
          "delete from catalog.variables where project_id = ? and id = ? returning id",
          [project.id, req.variableId],
        );
        if (deleted.length === 0) throw missing(req.variableId);
      });
      return {};
    },

    async getVariableValues(req, ctx: HandlerContext) {
      requireExecutor(ctx);
      if (!req.testResultId) throw invalid("test_result_id is required");
      // Only for a test the runs service just gave this executor: a stolen executor token alone
      // does not open every project's values.
      const grant = variablesGrants.check(req.grant, {
        projectId: req.projectId,
        testResultId: req.testResultId,
      });
      if (grant !== "valid")
        throw denied(
          `the grant to read this test's variable values is ${grant === "expired" ? "expired" : "missing or not for this project and test"}`,
        );
      const [read] = await readValues([req.projectId]);
      // The audit record: who read how many values for which test; never the values themselves.
      // At info although it is one line per call: executors call this only for a test whose
      // batch (GetVariableValuesBatch) was refused, or from a catalog that does not serve
      // batches, so it is not a line per test on their usual path, and it records the reads that
      // most deserve a record (those after a refusal).
      logger.info(
        { project_id: req.projectId, test_result_id: req.testResultId, variables: read?.count ?? 0 },
        "executor read variable values",
      );
      return { values: read?.values ?? {} };
    },

    async getVariableValuesBatch(req, ctx: HandlerContext) {
      requireExecutor(ctx);
      if (req.tests.length < 1 || req.tests.length > maxBatch)
        throw invalid(`tests must hold 1 to ${maxBatch} entries (got ${req.tests.length})`);
      const testsOf = new Map<string, string[]>();
      const seen = new Set<string>();
      let refused = 0;
      for (const [index, test] of req.tests.entries()) {
        if (!test.testResultId) throw invalid(`tests[${index}].test_result_id is required`);
        if (seen.has(test.testResultId)) throw invalid(`tests[${index}] names a test given before`);
        seen.add(test.testResultId);
        const scope = { projectId: test.projectId, testResultId: test.testResultId };
        // Every grant is checked (no stop at the first bad one), and the refusal names none: the
        // executor learns which test is at fault only by asking for each alone.
        if (variablesGrants.check(test.grant, scope) !== "valid") refused++;
        testsOf.set(test.projectId, [...(testsOf.get(test.projectId) ?? []), test.testResultId]);
      }
      if (refused > 0)
        throw denied("a grant to read variable values is missing, expired or not for its project and test");
      const read = await readValues([...testsOf.keys()]);
      // The audit record: this call at debug with its tests, summed per project into one info
      // line a minute (variable-reads-audit.ts), so that nothing is logged per test at info.
      logger.debug(
        {
          tests: req.tests.length,
          projects: read.map(({ projectId, count }) => ({
            project_id: projectId,
            variables: count,
            test_result_ids: testsOf.get(projectId),
          })),
        },
        "executor read variable values",
      );
      for (const { projectId, count } of read)
        variableReads.add(projectId, testsOf.get(projectId)?.length ?? 0, count);
      return {
        projects: Object.fromEntries(read.map(({ projectId, values }) => [projectId, { values }])),
      };
    },
  };
}
