// Failure groups and comparisons (docs/rest-api.md, "Failure groups" and "Comparing runs"):
// ListFailureGroups, GetFailureGroup, CompareRuns. Reads only: the groups are written by the
// statement that ends each failed attempt (Migration20261128220000_failure_groups).

import { Code, ConnectError } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FailureGroupState } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { ServiceDeps } from "../deps.js";
import { invalid, runNotFound } from "../errors.js";
import { compareRuns } from "../failures/compare.js";
import { type GroupState, renderGroup, renderGroupCase, renderOccurrence } from "../failures/render.js";
import { renderRun } from "../render.js";
import { decodePageToken, encodePageToken } from "../store/reads.js";
import { authorize, type Handlers } from "./context.js";
import { decodeOffset, encodeOffset, pageSize } from "./paging.js";

const maxGroups = 100;
const defaultGroups = 50;
const maxOccurrences = 100;
const defaultOccurrences = 50;

const storedStates: Partial<Record<FailureGroupState, GroupState>> = {
  [FailureGroupState.OPEN]: "open",
  [FailureGroupState.RESOLVED]: "resolved",
  [FailureGroupState.REOPENED]: "reopened",
};

export function failureHandlers(deps: ServiceDeps): Handlers {
  const { failures, reads, links, health } = deps;
  return {
    async listFailureGroups(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const limit = pageSize(req.limit, defaultGroups, maxGroups);
      const states: GroupState[] =
        req.states.length === 0
          ? ["open", "reopened"]
          : req.states.map(
              (state) => storedStates[state] ?? (invalid("states must be known states") as never),
            );
      const offset = decodeOffset(req.cursor);
      const rows = await failures.list(req.projectId, states, offset, limit);
      return {
        groups: rows.slice(0, limit).map((row) => renderGroup(row, links)),
        nextCursor: rows.length > limit ? encodeOffset(offset + limit) : "",
      };
    },

    async getFailureGroup(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const limit = pageSize(req.limit, defaultOccurrences, maxOccurrences);
      const after = req.cursor ? decodePageToken(req.cursor) : undefined;
      if (req.cursor && !after) throw invalid("cursor is not valid");
      const group = await failures.get(req.projectId, req.failureGroupId);
      if (!group) throw new ConnectError("no such failure group in this project", Code.NotFound);
      const occurrences = await failures.occurrences(group.id, after, limit);
      const page = occurrences.slice(0, limit);
      const last = page.at(-1);
      return {
        group: renderGroup(group, links),
        occurrences: page.map((row) => renderOccurrence(row, req.projectId, links)),
        nextCursor:
          occurrences.length > limit && last ? encodePageToken({ createdAt: last.page_at, id: last.id }) : "",
        cases: (await failures.cases(group.id)).map(renderGroupCase),
      };
    },

    async compareRuns(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const run = await reads.getRun(req.projectId, req.runId);
      if (!run) throw runNotFound();
      const baseId = req.baseRunId ?? run.run.base_run_id ?? (await failures.baseOf(run.run.id));
      const base = baseId ? await reads.getRun(req.projectId, baseId) : undefined;
      if (req.baseRunId && !base) throw new ConnectError("no such base run in this project", Code.NotFound);
      const failingSince = await health.failingSince(req.projectId, run.run.environment_id, [
        ...new Set(run.tests.map((t) => t.test_case_id)),
      ]);
      const comparison = compareRuns(run, base, failingSince);
      const names = await failures.variableNames([run.run.id, ...(base ? [base.run.id] : [])]);
      const now = names.get(run.run.id);
      const then = base ? names.get(base.run.id) : undefined;
      const known = Array.isArray(now) && Array.isArray(then);
      return {
        run: renderRun(run.run, undefined, links),
        ...(base && { base: renderRun(base.run, undefined, links) }),
        baseRule: req.baseRunId ? "named" : base ? "previous" : "none",
        tests: comparison.tests,
        counts: comparison.counts,
        baseUrlBefore:
          base && base.run.environment_base_url !== run.run.environment_base_url
            ? base.run.environment_base_url
            : "",
        baseUrlAfter:
          base && base.run.environment_base_url !== run.run.environment_base_url
            ? run.run.environment_base_url
            : "",
        variablesAdded: known ? (now ?? []).filter((n) => !(then ?? []).includes(n)) : [],
        variablesRemoved: known ? (then ?? []).filter((n) => !(now ?? []).includes(n)) : [],
        casesAdded: comparison.casesAdded,
        casesRemoved: comparison.casesRemoved,
      };
    },
  };
}
