import type { Redis } from "ioredis";

/**
 * How many long-polls (GET /v1/runs/{id}?wait=S) one key, and one project (all its keys together),
 * hold at once, counted across every gateway replica in Redis: a sorted set per key and one per
 * project of the waits in progress, each scored with the time it ends at the latest, so a replica
 * that died mid-wait frees its slots when they would have ended anyway. One script per acquire
 * checks and counts both, so neither count can be overshot under concurrency.
 */

// KEYS: the key's set of waits, the project's. ARGV: wait id, its longest duration in ms, the
// bound per key, the bound per project. Returns 1 when the wait may begin (and is counted in both
// sets), 0 when the key holds its bound already, -1 when the project does (and nothing is counted).
const acquireScript = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
local ends = nowMs + tonumber(ARGV[2])
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], ends, ARGV[1])
  local last = tonumber(redis.call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')[2])
  redis.call('PEXPIREAT', KEYS[i], last)
end
return 1
`;

type ScriptCommand = (...args: (string | number)[]) => Promise<number>;

/** A wait's slot, or which bound refused it. */
export type WaitSlot = { release: () => Promise<void> } | { refused: "key" | "project" };

export interface WaitBounds {
  /** Most waits one key may hold at once. */
  perKey: number;
  /** Most waits the keys of one project may hold at once, together. */
  perProject: number;
}

export class WaitSlots {
  private readonly acquireCommand: ScriptCommand;

  constructor(
    private readonly redis: Redis,
    readonly bounds: WaitBounds,
  ) {
    redis.defineCommand("gatewayAcquireWait", { numberOfKeys: 2, lua: acquireScript });
    const command = (redis as unknown as Record<string, ScriptCommand>).gatewayAcquireWait as ScriptCommand;
    this.acquireCommand = (...args) => command.apply(redis, args);
  }

  /**
   * Takes a slot of the key and of its project for a wait of at most `longestMs`; resolves with
   * its release, or with the bound that refused it (the key's is checked first).
   */
  async acquire(
    owner: { keyId: string; projectId: string },
    waitId: string,
    longestMs: number,
  ): Promise<WaitSlot> {
    const taken = await this.acquireCommand(
      keyWaits(owner.keyId),
      projectWaits(owner.projectId),
      waitId,
      longestMs,
      this.bounds.perKey,
      this.bounds.perProject,
    );
    if (taken === 0) return { refused: "key" };
    if (taken === -1) return { refused: "project" };
    return {
      release: async () => {
        // One round trip (a pipeline, not a transaction): each set forgets the wait.
        await this.redis
          .pipeline()
          .zrem(keyWaits(owner.keyId), waitId)
          .zrem(projectWaits(owner.projectId), waitId)
          .exec();
      },
    };
  }
}

const keyWaits = (keyId: string) => `testrun:gateway:waits:${keyId}`;
const projectWaits = (projectId: string) => `testrun:gateway:project-waits:${projectId}`;
