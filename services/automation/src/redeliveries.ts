import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { KeyedBuckets } from "@testrun/kit";
import { exhausted } from "./errors.js";

/** Callers and webhooks whose buckets one replica remembers at once (kit rate-buckets.ts). */
export const maxRedeliveryBuckets = 10_000;

export interface RedeliveryBounds {
  /** Redeliver calls one caller (a member, or an operator by name) makes per minute. */
  perCallerPerMinute: number;
  /** Redeliver calls of one webhook's deliveries per minute, every caller together. */
  perWebhookPerMinute: number;
}

/**
 * The bounds on Redeliver, each a token bucket refilled evenly over a minute, per replica (the
 * automation service has no Redis; the calls of one console or testrunctl mostly reach one
 * replica). Each redelivery is an outbound request to the webhook's URL, sent now: per caller, so
 * one member (any Editor) cannot keep the delivery workers busy for everyone; per webhook, so the
 * receiver is not hammered by several members at once. The caller's bucket is taken first, and a
 * caller refused takes nothing from the webhook's. At most maxRedeliveryBuckets of each are
 * remembered, the least recently used forgotten first (docs/security.md, "Resource limits").
 */
export class RedeliveryLimits {
  private readonly callers: KeyedBuckets;
  private readonly webhooks: KeyedBuckets;

  constructor(
    readonly bounds: RedeliveryBounds,
    now: () => number = Date.now,
  ) {
    this.callers = new KeyedBuckets(bounds.perCallerPerMinute, maxRedeliveryBuckets, now);
    this.webhooks = new KeyedBuckets(bounds.perWebhookPerMinute, maxRedeliveryBuckets, now);
  }

  /** Takes one redelivery for the caller and the webhook, or throws RESOURCE_EXHAUSTED saying which bound and when to try again. */
  take(actor: Actor | undefined, webhookId: string): void {
    const caller =
      actor?.kind.case === "memberId"
        ? `member:${actor.kind.value}`
        : actor?.kind.case === "operator"
          ? `operator:${actor.kind.value.name}`
          : "unknown";
    const ofCaller = this.callers.take(caller);
    if (ofCaller > 0)
      throw exhausted(
        `you redelivered ${this.bounds.perCallerPerMinute} deliveries within a minute, the most one member may; try again in ${ofCaller} s`,
      );
    const ofWebhook = this.webhooks.take(webhookId);
    if (ofWebhook > 0)
      throw exhausted(
        `this webhook's deliveries were redelivered ${this.bounds.perWebhookPerMinute} times within a minute, the most one webhook may; try again in ${ofWebhook} s`,
      );
  }
}
