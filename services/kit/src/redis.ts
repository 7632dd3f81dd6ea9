import { Redis } from "ioredis";

/**
 * How long a command may wait for its answer. A Redis that accepts connections but does not answer
 * (overloaded, a network path dropping packets) must fail a call, not hold it: a run start waiting
 * on its publication would otherwise outlast its caller. Blocking reads need a longer one.
 */
export const redisCommandTimeoutMs = 5_000;

/**
 * Connects to Redis and waits until it answers, so a wrong URL fails the start rather than the
 * first request. Commands fail fast while disconnected instead of queueing without bound.
 */
export async function connectRedis(url: string, options: { autoPipelining?: boolean } = {}): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: false,
    commandTimeout: redisCommandTimeoutMs,
    // Commands issued in the same tick (concurrent requests' rate-limit scripts, say) go out in one
    // write: on a busy gateway, a system call per command was a tenth of its CPU. Redis still runs
    // them in order, as it would one by one. Off unless asked: the executors' stream commands
    // stalled with it.
    enableAutoPipelining: options.autoPipelining ?? false,
    // No CLIENT SETINFO (Redis 7.2+): the services' Redis users are not granted it, as the ACL
    // rules must also load on Redis 7.0, which does not know the command.
    disableClientInfo: true,
  });
  await redis.connect();
  return redis;
}
