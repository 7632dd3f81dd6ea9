import { create } from "@bufbuild/protobuf";
import { TestDispatchSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { publishTests, type TestKind } from "@testrun/kit";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { TestStepSnapshot } from "./db/entities.js";
import type { PublicationStore } from "./store/publications.js";

export interface Dispatch {
  testResultId: string;
  runId: string;
  projectId: string;
  /** Which executors may take it (testKindOf its steps): the stream it is published to. */
  kind: TestKind;
}

/**
 * What a test needs of an executor: `spec` for a Playwright spec (the user-code sandbox), `browser`
 * when one of its steps is a browser step (a step snapshot is step.proto's JSON, whose `kind` oneof
 * appears as the key `http` or `browser`), else `http`. The reconciler and the metrics ask
 * PostgreSQL the same question (testKindSql).
 */
export function testKindOf(steps: readonly TestStepSnapshot[], spec = false): TestKind {
  if (spec) return "spec";
  return steps.some((step) => step.browser !== undefined) ? "browser" : "http";
}

/**
 * A test's kind in SQL (`alias` names runs.test_results): `spec` for a Playwright spec, `browser`
 * when one step has the key `browser`, else `http`. The twin of testKindOf, which
 * answers the same for steps in memory.
 */
export const testKindSql = (alias: string) =>
  `(case when ${alias}.playwright is not null then 'spec' when jsonb_path_exists(${alias}.steps, '$[*].browser') then 'browser' else 'http' end)`;

/** Whether a test row runs a Playwright spec (rows.ts TestRow.has_spec). */
export const isSpecTest = (row: { has_spec?: boolean; playwright?: unknown }) =>
  row.has_spec === true || (row.playwright !== undefined && row.playwright !== null);

/** testKindOf a test row. */
export const kindOfTest = (row: {
  steps: readonly TestStepSnapshot[];
  has_spec?: boolean;
  playwright?: unknown;
}) => testKindOf(row.steps, isSpecTest(row));

/**
 * Hands tests to the executors' queue. Publishing never fails a call: PostgreSQL is the source of
 * truth, and the reconciler publishes again whatever stays QUEUED, so a lost publication only
 * delays a test.
 */
export class Dispatcher {
  constructor(
    private readonly redis: Redis,
    private readonly publications: PublicationStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Publishes `dispatches` and records when (for the reconciler's republishing), unless the
   * caller's own write already did (`marked`: a start marks its tests as it makes the run visible).
   */
  async publish(dispatches: readonly Dispatch[], options: { marked?: boolean } = {}): Promise<void> {
    if (dispatches.length === 0) return;
    try {
      await publishTests(
        this.redis,
        dispatches.map(({ testResultId, runId, projectId, kind }) => ({
          dispatch: create(TestDispatchSchema, { testResultId, runId, projectId }),
          kind,
        })),
      );
      if (!options.marked) await this.publications.markPublished(dispatches.map((d) => d.testResultId));
    } catch (err) {
      this.logger.warn({ err, tests: dispatches.length }, "could not publish tests; the reconciler retries");
    }
  }
}
