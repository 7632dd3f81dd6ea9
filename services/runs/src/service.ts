import type { ServiceImpl } from "@connectrpc/connect";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { fromHandlerGroups } from "@testrun/kit";
import type { ServiceDeps } from "./deps.js";
import { artifactHandlers } from "./rpc/artifacts.js";
import { cancelHandlers } from "./rpc/cancel.js";
import { executorKindHandlers } from "./rpc/executor-kinds.js";
import { executorHandlers } from "./rpc/executors.js";
import { failureHandlers } from "./rpc/failures.js";
import { healthHandlers } from "./rpc/health.js";
import { readHandlers } from "./rpc/reads.js";
import { startHandlers } from "./rpc/starts.js";
import { watchHandlers } from "./rpc/watch.js";

/** The RunsService methods the executor identity may call (and only it). */
export const executorMethods = [
  "ClaimTest",
  "ClaimTests",
  "HeartbeatTest",
  "HeartbeatLeases",
  "ReleaseTest",
  "CompleteTest",
  "SkipRun",
  "PutArtifact",
  "ReportExecutorKinds",
];

/** Every method of RunsService, from its handler groups (rpc/). */
export function runsService(deps: ServiceDeps): ServiceImpl<typeof RunsService> {
  return fromHandlerGroups(
    RunsService,
    startHandlers(deps),
    readHandlers(deps),
    watchHandlers(deps),
    cancelHandlers(deps),
    executorHandlers(deps),
    artifactHandlers(deps),
    executorKindHandlers(deps),
    healthHandlers(deps),
    failureHandlers(deps),
  );
}
