/**
 * Mocha global fixtures: when DATABASE_URL / REDIS_URL are unset, start throwaway servers for the
 * whole run and stop them afterwards. Servers given through the environment are used as they are.
 */
import {
  startThrowawayPostgres,
  startThrowawayRedis,
  type ThrowawayServer,
} from "../services/kit/src/testing/servers.js";

const started: ThrowawayServer[] = [];

export async function mochaGlobalSetup(): Promise<void> {
  const [postgres, redis] = await Promise.all([
    process.env.DATABASE_URL ? undefined : startThrowawayPostgres(),
    process.env.REDIS_URL ? undefined : startThrowawayRedis(),
  ]);
  if (postgres) {
    started.push(postgres);
    process.env.DATABASE_URL = postgres.url;
  }
  if (redis) {
    started.push(redis);
    process.env.REDIS_URL = redis.url;
  }
}

export async function mochaGlobalTeardown(): Promise<void> {
  await Promise.all(started.splice(0).map((server) => server.stop()));
}
