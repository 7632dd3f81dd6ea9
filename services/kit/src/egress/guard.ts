// Every connection an executor makes to a target goes through here (docs/runs.md, "Egress"): the
// host is resolved once, every address it resolves to is checked against the policy, and the
// socket connects to the addresses checked, never to a second lookup's answer, so a DNS record
// that changes between the check and the connection (DNS rebinding) cannot swap them.
import { promises as dns, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction, type Socket } from "node:net";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import type { EgressPolicy } from "./policy.js";

/**
 * A connection refused by the policy. Callers report it exactly as an unknown host or a refused
 * connection, so what lies behind a refused address cannot be told from the outside.
 */
export class EgressRefused extends Error {
  readonly code = "EGRESS_REFUSED";
  constructor() {
    super("the address is outside what executors may connect to");
    this.name = "EgressRefused";
  }
}

/** Resolves a host name to all its addresses: dns.lookup (the system resolver) unless a test swaps it. */
export type Resolve = (hostname: string, family: number) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname, family) =>
  dns.lookup(hostname, { all: true, family: family as 0 | 4 | 6 });

type FetchInit = NonNullable<Parameters<typeof undiciFetch>[1]>;

export interface ClusterNames {
  /** EGRESS_CLUSTER_DOMAIN: the cluster's DNS domain, whose names are refused like `.svc` ones. */
  domain?: string;
  /** EGRESS_ALLOW_CLUSTER_NAMES: connect to cluster names too (their addresses are still checked). */
  allow?: boolean;
}

/**
 * Whether a host name is one cluster DNS answers with an address inside the cluster: `<svc>.<ns>.svc`,
 * anything under `.cluster.local` or the cluster's domain, and a single label (`redis`, `runs`),
 * which the pod's search domains complete to `<name>.<namespace>.svc.<domain>`. A backstop for a
 * chart whose pod and Service ranges are not set: the addresses these resolve to are private,
 * which the policy allows. `localhost` is left to the address rules (loopback is refused there).
 */
export function isClusterName(hostname: string, domain = "cluster.local"): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || isIP(name) !== 0) return false;
  if (!name.includes(".")) return true;
  return [".svc", ".cluster.local", `.${domain.toLowerCase().replace(/\.$/, "")}`].some(
    (suffix) => name.endsWith(suffix) || name === suffix.slice(1),
  );
}

/**
 * When a connection's stages ended (performance.now()): the host resolved (absent for an IP
 * address), TCP connected, and the connection ready for requests (after the TLS handshake for
 * https; the same moment as connectedAt for http).
 */
export interface ConnectionTimes {
  startedAt: number;
  resolvedAt?: number;
  connectedAt?: number;
  readyAt?: number;
}

const connectionTimesOf = new WeakMap<Socket, ConnectionTimes>();

/** The stages of a connection the guard made (undefined for any other socket). */
export const connectionTimes = (socket: Socket): ConnectionTimes | undefined => connectionTimesOf.get(socket);

export class EgressGuard {
  readonly #policy: EgressPolicy;
  readonly #resolve: Resolve;
  readonly #refusesName: (hostname: string) => boolean;
  readonly #connector = buildConnector({ lookup: (...args) => this.lookup(...args) });
  /**
   * The undici dispatcher whose connections are all checked: every request of a fetch made with it,
   * each redirect hop included, connects through `#connect`.
   */
  readonly dispatcher = new Agent({ connect: (options, callback) => this.#connect(options, callback) });

  readonly #maxLookups: number;
  #lookupsInFlight = 0;

  constructor(
    policy: EgressPolicy,
    {
      resolve = systemResolve,
      clusterNames = {},
      maxLookups = Number.POSITIVE_INFINITY,
    }: {
      resolve?: Resolve;
      clusterNames?: ClusterNames;
      /**
       * Lookups in flight at once; past it a lookup fails at once as EAI_AGAIN. The system resolver
       * runs on libuv's few threads and a lookup cannot be cancelled, so a caller that gives up on
       * slow ones (a webhook attempt's deadline) would otherwise let them pile up there.
       */
      maxLookups?: number;
    } = {},
  ) {
    this.#policy = policy;
    this.#resolve = resolve;
    this.#maxLookups = maxLookups;
    this.#refusesName = clusterNames.allow ? () => false : (name) => isClusterName(name, clusterNames.domain);
  }

  /** undici's connector, with IP literals checked: net and tls connect to those without `lookup`. */
  #connect(options: buildConnector.Options, callback: buildConnector.Callback): void {
    if (!this.#literalAllowed(options.hostname)) {
      queueMicrotask(() => callback(new EgressRefused(), null));
      return;
    }
    const times: ConnectionTimes = { startedAt: performance.now() };
    // undici's connector hands back the socket it creates (its type says void): its events time
    // the connection's stages for connectionTimes, which a step reports with a failed response.
    const socket = (this.#connector as (...args: Parameters<buildConnector.connector>) => Socket | undefined)(
      options,
      (...result) => {
        if (!result[0]) times.readyAt = performance.now();
        callback(...result);
      },
    );
    if (!socket) return;
    connectionTimesOf.set(socket, times);
    socket.once("lookup", () => {
      times.resolvedAt = performance.now();
    });
    socket.once("connect", () => {
      times.connectedAt = performance.now();
    });
  }

  /**
   * A `lookup` for net.connect / tls.connect: refuses a cluster name (isClusterName) unresolved,
   * else resolves the host once and answers only if every address is allowed (one refused address
   * refuses the host: which of several addresses a connection would use is not the host's choice).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    if (this.#refusesName(hostname)) {
      queueMicrotask(() => callback(new EgressRefused(), "", 0));
      return;
    }
    if (this.#lookupsInFlight >= this.#maxLookups) {
      queueMicrotask(() => callback(tryAgain(hostname), "", 0));
      return;
    }
    this.#lookupsInFlight += 1;
    this.#resolve(hostname, options.family === 4 || options.family === 6 ? options.family : 0).then(
      (addresses) => {
        this.#lookupsInFlight -= 1;
        if (addresses.length === 0) return callback(notFound(hostname), "", 0);
        if (!addresses.every(({ address }) => this.#policy.allows(address)))
          return callback(new EgressRefused(), "", 0);
        if (options.all) return callback(null, addresses);
        const [first] = addresses as [LookupAddress];
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => {
        this.#lookupsInFlight -= 1;
        callback(error, "", 0);
      },
    );
  };

  /** True for a host name (checked when resolved) and for an allowed IP literal. */
  #literalAllowed(hostname: string): boolean {
    const host = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
    return isIP(host) === 0 || this.#policy.allows(host);
  }

  /**
   * fetch (undici's) through the guarded dispatcher, whatever `init` says: the one way step kinds
   * make requests. Redirects a caller asks to follow are followed through it too.
   */
  fetch(input: string | URL, init: Omit<FetchInit, "dispatcher"> = {}) {
    return undiciFetch(input, { ...init, dispatcher: this.dispatcher });
  }

  /**
   * A TCP connection to host:port through the same checks, for a forward proxy's CONNECT (the way a
   * browser step kind would route through this guard: docs/runs.md, "Egress").
   */
  connect(host: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      this.#connect({ hostname: host, protocol: "http:", port: String(port) }, (error, socket) =>
        error ? reject(error) : resolve(socket as Socket),
      );
    });
  }

  /** Closes the pooled connections. */
  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/** What the system resolver says when it cannot answer now: callers already treat it as passing. */
function tryAgain(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: "EAI_AGAIN" });
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
}
