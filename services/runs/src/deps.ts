import type { Client } from "@connectrpc/connect";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { AccessCache, VariablesGrants } from "@testrun/kit";
import type { Logger } from "pino";
import type { ArtifactContents } from "./artifacts/contents.js";
import type { ArtifactSweeper } from "./artifacts/sweeper.js";
import type { Credits } from "./credits.js";
import type { Dispatcher } from "./dispatcher.js";
import type { ExecutorKinds } from "./executor-kinds.js";
import type { FailureStore } from "./failures/store.js";
import type { HealthStore } from "./health/store.js";
import type { Links } from "./links.js";
import type { RunEvents } from "./run-events.js";
import type { ArtifactStore } from "./store/artifacts.js";
import type { CancelStore } from "./store/cancel.js";
import type { LeaseStore } from "./store/leases.js";
import type { RunReads } from "./store/reads.js";
import type { StartStore } from "./store/starts.js";
import type { RunWatches } from "./watch.js";

// What the runs service's handlers work with, built once by main.ts. Its own module so that the
// service and the start path (start.ts) both depend on it rather than on each other.

/** What StartRun needs. */
export interface StartDeps {
  starts: StartStore;
  /** Also the start's read-back of the run it started. */
  reads: RunReads;
  catalog: Client<typeof CatalogService>;
  billing: Client<typeof BillingService>;
  credits: Credits;
  dispatcher: Dispatcher;
  links: Links;
  logger: Logger;
  /** Lapsed leases after which a test is FAILED (reported to executors in assignments). */
  maxAttempts: number;
  /** Issues each claim's grant to read the project's variable values. */
  variablesGrants: VariablesGrants;
}

/** What every RunsService method needs: StartRun's, the access checks, the executors' leases, cancels, events and watches. */
export interface ServiceDeps extends StartDeps {
  /** The catalog's access checks of the reads, cancels and reruns, with its grants cached. */
  access: AccessCache;
  leases: LeaseStore;
  cancels: CancelStore;
  events: RunEvents;
  watches: RunWatches;
  /** Artifacts: their metadata, their bytes' store, and the sweeper that deletes them. */
  artifacts: ArtifactStore;
  contents: ArtifactContents;
  sweeper: ArtifactSweeper;
  /** ARTIFACT_MAX_BYTES: the largest artifact PutArtifact stores. */
  artifactMaxBytes: number;
  /** What the executors say of each kind: what a QUEUED test waits for (TestResult.waiting_for). */
  kinds: ExecutorKinds;
  /** Test health: histories, the health kept per case, quarantines. */
  health: HealthStore;
  /** Failure groups and the base runs of comparisons. */
  failures: FailureStore;
}
