// The timing of an HTTP step's request, reported with a failed step's response (http-evidence.ts):
// when each stage ended, in milliseconds from the moment the step sent its request, as curl's
// `-w` times are (time_namelookup, time_connect, time_appconnect, time_starttransfer, time_total).
//
// How it is measured: undici publishes on diagnostics_channel the request it creates
// (`undici:request:create`, in the caller's async context, so an AsyncLocalStorage tells whose it
// is among the tests running at once) and the socket it sends that request on
// (`undici:client:sendHeaders`); the egress guard that made the socket timed its stages from the
// socket's own events (`lookup`, `connect`, and TLS's `secureConnect`: connectionTimes). The first
// byte is when fetch resolves (the response's headers arrived), the total when the body was read.
import { AsyncLocalStorage } from "node:async_hooks";
import { subscribe } from "node:diagnostics_channel";
import type { Socket } from "node:net";
import { connectionTimes } from "@testrun/kit/egress";

/** Milliseconds from the request's start at which each stage ended (one decimal). */
export interface HttpTimings {
  /**
   * The request went on a connection an earlier request had opened (undici keeps connections to
   * a host open between steps): it had no DNS, connect or TLS stage of its own, all three null.
   */
  connectionReused: boolean;
  /** The host resolved; null for an IP address, a reused connection, or when not seen. */
  dnsMs: number | null;
  /** TCP connected. */
  connectMs: number | null;
  /** The TLS handshake done; null for http. */
  tlsMs: number | null;
  /** The response's status line and headers arrived. */
  firstByteMs: number;
  /** The body read (or the part of it read: RESPONSE_MAX_BYTES). */
  totalMs: number;
}

interface Trace {
  socket?: Socket;
}

const current = new AsyncLocalStorage<Trace>();
/** undici's request object -> the trace of the step that created it. */
const traces = new WeakMap<object, Trace>();
let listening = false;

function listen(): void {
  if (listening) return;
  listening = true;
  subscribe("undici:request:create", (message) => {
    const trace = current.getStore();
    if (trace) traces.set((message as { request: object }).request, trace);
  });
  subscribe("undici:client:sendHeaders", (message) => {
    const { request, socket } = message as { request: object; socket: Socket };
    const trace = traces.get(request);
    if (trace) trace.socket = socket;
  });
}

/** A request's clock: started when made, read with `timings` once the body was read. */
export class RequestTimer {
  readonly #trace: Trace = {};
  readonly #startedAt = performance.now();
  #firstByteAt: number | undefined;

  /** Runs `send` (the fetch) with its request traced, noting when the response's headers came. */
  async send<T>(send: () => Promise<T>): Promise<T> {
    listen();
    const response = await current.run(this.#trace, send);
    this.#firstByteAt = performance.now();
    return response;
  }

  /** The stages, the total ending now. */
  timings(): HttpTimings {
    const now = performance.now();
    const since = (at: number | undefined) => (at === undefined ? null : round(at - this.#startedAt));
    const socket = this.#trace.socket;
    const times = socket && connectionTimes(socket);
    // A connection opened before this request is an earlier request's (its stages are not this one's).
    const reused = times === undefined || times.startedAt < this.#startedAt;
    const tls = socket !== undefined && "encrypted" in socket;
    return {
      connectionReused: reused && socket !== undefined,
      dnsMs: reused ? null : since(times.resolvedAt),
      connectMs: reused ? null : since(times.connectedAt),
      tlsMs: reused || !tls ? null : since(times.readyAt),
      firstByteMs: since(this.#firstByteAt ?? now) as number,
      totalMs: round(now - this.#startedAt),
    };
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;
