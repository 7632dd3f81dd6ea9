import type { Redis } from "ioredis";

/**
 * How many long-polls (GET /v1/runs/{id}?wait=S) one key holds at once, counted across every
 * gateway replica in Redis: a sorted set per key of the waits in progress, each scored with the
 * time it ends at the latest, so a replica that died mid-wait frees its slots when they would have
 * ended anyway. One script per acquire keeps the count exact under concurrency.
 */

// KEYS: the key's set of waits. ARGV: wait id, its longest duration in ms, the bound.
// Returns 1 when the wait may begin (and is counted), 0 when the key holds the bound already.
const acquireScript = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
local ends = nowMs + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], ends, ARGV[1])
local last = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
redis.call('PEXPIREAT', KEYS[1], last)
return 1
`;

type ScriptCommand = (...args: (string | number)[]) => Promise<number>;

export class WaitSlots {
  private readonly acquireCommand: ScriptCommand;

  constructor(
    private readonly redis: Redis,
    /** Most waits one key may hold at once. */
    readonly perKey: number,
  ) {
    redis.defineCommand("gatewayAcquireWait", { numberOfKeys: 1, lua: acquireScript });
    const command = (redis as unknown as Record<string, ScriptCommand>).gatewayAcquireWait as ScriptCommand;
    this.acquireCommand = (...args) => command.apply(redis, args);
  }

  /**
   * Takes a slot of the key for a wait of at most `longestMs`; resolves with its release, or with
   * undefined when the key already holds `perKey` waits.
   */
  async acquire(
    keyId: string,
    waitId: string,
    longestMs: number,
  ): Promise<(() => Promise<void>) | undefined> {
    const key = waitsKey(keyId);
    const taken = await this.acquireCommand(key, waitId, longestMs, this.perKey);
    if (taken !== 1) return undefined;
    return async () => {
      await this.redis.zrem(key, waitId);
    };
  }
}

const waitsKey = (keyId: string) => `testrun:gateway:waits:${keyId}`;
