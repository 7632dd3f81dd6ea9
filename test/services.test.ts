import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@testrun/gen/grpc/health/v1/health_pb";
import {
  componentRedisUrl,
  createTestDatabase,
  runServiceCommand,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import pg from "pg";
import { services } from "../scripts/services.js";

/** Every service with data (the registry's migrates), and the schema it owns: its name. */
const schemaOwners = Object.fromEntries(
  services.filter((service) => service.migrates).map((service) => [service.name, service.name]),
);

describe("every service", () => {
  let env: Record<string, string>;

  before(async () => {
    env = {
      ...testTokens(),
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
      DATABASE_URL: await createTestDatabase(String(process.env.DATABASE_URL)),
      CATALOG_URL: "http://127.0.0.1:1",
      HTTP_PORT: "0",
    };
  });

  it("migrates only its own schema, and a second migrate changes nothing", async () => {
    for (const service of Object.keys(schemaOwners)) await runServiceCommand(service, ["migrate"], env);
    const again = await runServiceCommand("billing", ["migrate"], env);
    expect(again).to.match(/"applied":\[\]/);

    const db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    const { rows } = await db.query<{ table_schema: string; table_name: string }>(
      "select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')",
    );
    await db.end();
    const schemas = new Set(rows.map((row) => row.table_schema));
    expect([...schemas].sort()).to.deep.equal(Object.values(schemaOwners).sort());
    for (const schema of schemas) {
      const tables = rows.filter((row) => row.table_schema === schema).map((row) => row.table_name);
      expect(tables, schema).to.include("mikro_orm_migrations");
      expect(tables.length, schema).to.be.greaterThan(1);
    }
  });

  for (const { name: service, redis } of services) {
    it(`${service} starts as its own process and reports SERVING`, async () => {
      // With its own Redis user (test/global-setup.ts made them), as deployed.
      const redisUrl = redis && componentRedisUrl(String(process.env.REDIS_URL), service);
      const child = await startServiceProcess(service, { ...env, ...(redisUrl && { REDIS_URL: redisUrl }) });
      try {
        const health = createClient(Health, createGrpcTransport({ baseUrl: child.url }));
        expect((await health.check({ service: "" })).status).to.equal(Status.SERVING);
      } finally {
        expect(await child.stop("SIGTERM")).to.equal(0);
      }
    });
  }
});
