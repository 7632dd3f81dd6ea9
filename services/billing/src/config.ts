import { baseConfigSchema, portVar, postgresUrl, serviceUrl } from "@testrun/kit";
import type { z } from "zod";

/** The billing service's environment. The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema.extend({
  PORT: portVar(7103),
  // GET /metrics for Prometheus (docs/operations.md, "Metrics"); 0 turns it off.
  METRICS_PORT: portVar(9463),
  DATABASE_URL: postgresUrl,
  /** The catalog, which authorizes actors (default: its local port). */
  CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
});

export type Config = z.infer<typeof configSchema>;
