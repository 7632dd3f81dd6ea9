import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import {
  baseConfigSchema,
  bind,
  portVar,
  postgresUrl,
  runService,
  serviceClient,
  serviceUrl,
} from "@testrun/kit";
import { z } from "zod";
import { isBase64Key, VariableCipher } from "./cipher.js";
import { database } from "./db/index.js";
import { KeysOutbox } from "./keys-outbox.js";
import { catalogService, executorMethods } from "./service.js";
import { Database } from "./sql.js";

await runService({
  name: "catalog",
  config: baseConfigSchema.extend({
    PORT: portVar(7102),
    DATABASE_URL: postgresUrl,
    /** The keys service, told when a member loses rights or a project is deleted (default: its local port). */
    KEYS_URL: serviceUrl.default("http://127.0.0.1:7101"),
    /** First wait before retrying a notification the keys service did not acknowledge; doubles each time. */
    KEYS_RETRY_MS: z.coerce.number().int().positive().default(10_000),
    /**
     * The AES-256 key of variable values: 32 bytes, base64. Without it the catalog still serves
     * everything else, and refuses to store or hand out variable values (FAILED_PRECONDITION).
     */
    VARIABLES_KEY: z.string().refine(isBase64Key, "must be 32 bytes, base64-encoded").optional(),
  }),
  database,
  setup: ({ config, orm, logger, onShutdown }) => {
    const db = new Database(orm);
    const keys = serviceClient(KeysService, config.KEYS_URL, {
      token: config.SERVICE_TOKEN,
      timeoutMs: 3_000,
    });
    const outbox = new KeysOutbox(db, keys, logger, config.KEYS_RETRY_MS);
    outbox.start();
    onShutdown(() => outbox.stop());
    if (!config.VARIABLES_KEY)
      logger.warn("VARIABLES_KEY is not set: variable values can be neither stored nor read");
    const cipher = config.VARIABLES_KEY ? new VariableCipher(config.VARIABLES_KEY) : undefined;
    return [bind(CatalogService, catalogService({ db, outbox, cipher, logger }), executorMethods)];
  },
});
