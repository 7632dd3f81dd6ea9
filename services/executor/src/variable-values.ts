// The project variables' values of the tests an executor claimed together: one
// GetVariableValuesBatch for the tests of a ClaimTests batch instead of one GetVariableValues a
// test, each project's values answered once. The values are secrets: they stay in memory, for the
// batch's tests only, and are never logged.
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { TestAssignment } from "@testrun/gen/testrun/runs/v1/runs_pb";

type Values = Record<string, string>;
type Catalog = Client<typeof CatalogService>;

/** How an executor reads values: batches while the catalog serves them. */
export class VariableReader {
  /** The catalog answered GetVariableValuesBatch UNIMPLEMENTED (older, during a rolling update). */
  #oneByOne = false;

  constructor(
    private readonly catalog: Catalog,
    /** Repeats a call that failed because the catalog was briefly unavailable. */
    private readonly retry: <T>(call: () => Promise<T>) => Promise<T>,
  ) {}

  /** The values of `assignments`, the tests of one claim, read together when the first needs its own. */
  batch(assignments: readonly TestAssignment[]): BatchValues {
    return new BatchValues(this, assignments);
  }

  /** One test's values (GetVariableValues): its errors are the test's. */
  one(assignment: TestAssignment): Promise<Values> {
    const { projectId, testResultId, variablesGrant: grant } = assignment;
    return this.retry(() => this.catalog.getVariableValues({ projectId, testResultId, grant })).then(
      (response) => response.values,
    );
  }

  /**
   * Each project's values for `tests`, or undefined when the call failed: a grant refused
   * (expired, say), a project gone, the catalog unavailable or too old. The tests then read theirs
   * one at a time, so that one bad test neither fails nor delays the others.
   */
  async many(tests: readonly TestAssignment[]): Promise<Map<string, Values> | undefined> {
    if (this.#oneByOne) return undefined;
    try {
      const { projects } = await this.retry(() =>
        this.catalog.getVariableValuesBatch({
          tests: tests.map(({ projectId, testResultId, variablesGrant: grant }) => ({
            projectId,
            testResultId,
            grant,
          })),
        }),
      );
      return new Map(Object.entries(projects).map(([projectId, project]) => [projectId, project.values]));
    } catch (error) {
      if (ConnectError.from(error).code === Code.Unimplemented) this.#oneByOne = true;
      return undefined;
    }
  }
}

/**
 * The values of the tests of one claim. Read when the first of them asks (after its environment
 * was found reachable), for those that have not ended meanwhile; forgotten once every test took
 * its own or ended without.
 */
export class BatchValues {
  readonly #reader: VariableReader;
  /** The tests that have not yet taken their values or ended. */
  readonly #waiting: Map<string, TestAssignment>;
  #read: Promise<Map<string, Values> | undefined> | undefined;

  constructor(reader: VariableReader, assignments: readonly TestAssignment[]) {
    this.#reader = reader;
    this.#waiting = new Map(assignments.map((assignment) => [assignment.testResultId, assignment]));
  }

  /** The values of the project of `assignment`, one of the batch's tests; rejects as GetVariableValues would. */
  async of(assignment: TestAssignment): Promise<Values> {
    let values: Values | undefined;
    try {
      // A batch of one too: the catalog then writes one audit line a claim, whatever its size.
      this.#read ??= this.#reader.many([...this.#waiting.values()]);
      values = (await this.#read)?.get(assignment.projectId);
    } finally {
      this.done(assignment.testResultId);
    }
    return values ?? this.#reader.one(assignment);
  }

  /** A test of the batch ended, or took its values: once none waits, the values are let go. */
  done(testResultId: string): void {
    this.#waiting.delete(testResultId);
    if (this.#waiting.size === 0) this.#read = undefined;
  }
}
