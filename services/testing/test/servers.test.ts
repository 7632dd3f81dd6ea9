import { createConnection } from "node:net";
import { expect } from "chai";
import { Redis } from "ioredis";
import pg from "pg";
import { createTestDatabase, startThrowawayRedis } from "../src/servers.js";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is unset: is test/global-setup.ts loaded?`);
  return value;
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Resolves with the error of a TCP connection attempt, or null if it connected. */
function connectError(port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.on("connect", () => {
      socket.destroy();
      resolve(null);
    });
    socket.on("error", (error) => resolve(error));
  });
}

describe("test servers", () => {
  it("DATABASE_URL points at a PostgreSQL server that answers queries", async () => {
    const rows = await query<{ one: number }>(env("DATABASE_URL"), "select 1 as one");
    expect(rows).to.deep.equal([{ one: 1 }]);
  });

  it("createTestDatabase returns a working, separate database", async () => {
    const base = env("DATABASE_URL");
    const url = await createTestDatabase(base);
    const name = new URL(url).pathname.slice(1);
    expect(name).to.match(/^t_[0-9a-f]+$/);
    expect(url).to.not.equal(base);

    const [row] = await query<{ db: string }>(url, "select current_database() as db");
    expect(row?.db).to.equal(name);
    await query(url, "create table isolated (id int)");
    const visible = await query(base, "select 1 from pg_tables where tablename = 'isolated'");
    expect(visible).to.have.length(0);

    const other = await createTestDatabase(base);
    expect(other).to.not.equal(url);
  });

  it("REDIS_URL points at a Redis server that answers PING", async () => {
    const redis = new Redis(env("REDIS_URL"), { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      expect(await redis.ping()).to.equal("PONG");
    } finally {
      redis.disconnect();
    }
  });

  it("startThrowawayRedis serves until stop() and frees its port afterwards", async () => {
    const server = await startThrowawayRedis();
    const port = Number(new URL(server.url).port);
    const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      expect(await redis.set("k", "v")).to.equal("OK");
      expect(await redis.get("k")).to.equal("v");
    } finally {
      redis.disconnect();
      await server.stop();
    }
    const error = await connectError(port);
    expect(error?.code).to.equal("ECONNREFUSED");
  });
});
