import type { ServiceImpl } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Logger, VariablesGrants } from "@testrun/kit";
import type { VariableCipher } from "../cipher.js";
import type { Outbox } from "../outbox.js";
import type { Database } from "../sql.js";
import type { VariableReadsAudit } from "../variable-reads-audit.js";

/** What every group of handlers works with. */
export interface Deps {
  db: Database;
  outbox: Outbox;
  /**
   * Starts a new access epoch, after the commit and before the RPC answers, on a change that may
   * take access away (a member's role changed or removed, a project deleted), so that grants other
   * services cached (kit AccessCache) are not used again.
   */
  announceAccessChange: () => Promise<void>;
  /** Unset when VARIABLES_KEY is not configured: variable values can then be neither written nor read. */
  cipher: VariableCipher | undefined;
  logger: Logger;
  /** Checks the runs service's grant that lets an executor read a project's values for one test. */
  variablesGrants: VariablesGrants;
  /** The info-level audit summary of executors' reads of variable values. */
  variableReads: VariableReadsAudit;
  /** Credits each new project is granted once (NEW_PROJECT_CREDITS; 0: none). */
  newProjectCredits: number;
  /** How many of an organization's projects, at most, get them (NEW_PROJECT_GRANTS_PER_ORGANIZATION). */
  newProjectGrantsPerOrganization: number;
}

/** Some of CatalogService's methods; service.ts puts the groups together. */
export type Handlers = Partial<ServiceImpl<typeof CatalogService>>;
