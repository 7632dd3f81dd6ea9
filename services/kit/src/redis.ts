import { Redis } from "ioredis";

/**
 * Connects to Redis and waits until it answers, so a wrong URL fails the start rather than the
 * first request. Commands fail fast while disconnected instead of queueing without bound.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: false });
  await redis.connect();
  return redis;
}
