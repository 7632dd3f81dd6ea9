import { AsyncResource } from "node:async_hooks";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import {
  type CallerIdentity,
  createLogger,
  type DatabaseSpec,
  type Logger,
  migrateDatabase,
  type Orm,
  openDatabase,
  type ServiceBinding,
} from "@testrun/kit";
import { createTestDatabase } from "./servers.js";

/**
 * Services served in the test's own process through connect's router transport: no socket, but
 * the very routes, service-token gate, body bounds and interceptors `startRpcServer` puts in front
 * of the handlers (`rpcRouting`), so authorization (tokens, actors, CheckAccess) and errors are
 * what a caller over gRPC gets. Several services may share one: a service whose wiring needs a
 * client of another (billing → catalog, keys ⇄ catalog) gets it from `client` before either is
 * served, and its calls reach the other in-process.
 *
 * Mocha requires test files, and tsx turns what they import statically into CommonJS copies of
 * the modules, beside the ES module copies that `import()` loads (the kit opens databases so). A
 * service's code must therefore come by `import()` (`await import("../src/wiring.js")`), and the
 * server side here too: its gate leaves the caller's identity under a context key the handlers'
 * copy of the kit must know, and its errors must be the classes the handlers' `instanceof` checks.
 * Clients may be of either copy: what they exchange with the server is encoded, as on a socket.
 */
export interface InProcessRpc {
  /** Adds services; clients made before see them too. */
  serve(...services: ServiceBinding[]): void;
  /** A client presenting `token` (none: an anonymous caller), like `serviceClient` over a socket. */
  client<S extends DescService>(desc: S, token?: string): Client<S>;
}

export function inProcessRpc(options: {
  tokens: Partial<Record<CallerIdentity, string>>;
  /** Gets the call log (`rpc failed`, `rpc refused`) as a service's server logs it. */
  logger: Logger;
}): InProcessRpc {
  const services: ServiceBinding[] = [];
  // One transport per token, built on first use from the services served by then.
  const transports = new Map<string, Promise<Transport>>();
  const current = (token: string | undefined): Promise<Transport> => {
    const key = token ?? "";
    let transport = transports.get(key);
    if (!transport) {
      transport = import("./router-transport.js").then(({ routerTransport }) =>
        routerTransport(services, options.tokens, options.logger, token),
      );
      transports.set(key, transport);
    }
    return transport;
  };
  // Each call starts in the async context of this point (test set-up), not the caller's: a process
  // boundary shares none, and what the caller's context holds must not reach the handler (a
  // MikroORM transaction of the calling service, say, would be taken for the handler's own). A
  // unary call runs there whole; a stream's handler runs as its messages are read, in the reader's
  // context, which no in-process service does inside a transaction today.
  const boundary = new AsyncResource("testrun.inProcessRpc");
  return {
    serve(...added) {
      services.push(...added);
      transports.clear();
    },
    client(desc, token) {
      const late: Transport = {
        unary: (...args) => boundary.runInAsyncScope(async () => (await current(token)).unary(...args)),
        stream: (...args) => boundary.runInAsyncScope(async () => (await current(token)).stream(...args)),
      };
      return createClient(desc, late);
    },
  };
}

/** A logger whose lines (the service's JSON log format, redaction included) the test reads. */
export interface CapturedLogger {
  logger: Logger;
  /** Every line logged so far. */
  lines(): string[];
  /** Resolves with the first line, already logged or still to come, that passes `test`. */
  line(test: (line: string) => boolean): Promise<string>;
}

export function capturedLogger(service: string, level = "info"): CapturedLogger {
  const lines: string[] = [];
  const waiting = new Set<{ test: (line: string) => boolean; resolve: (line: string) => void }>();
  const logger = createLogger(service, level, {
    write(text: string) {
      for (const line of text.split("\n")) {
        if (!line) continue;
        lines.push(line);
        for (const waiter of waiting) {
          if (!waiter.test(line)) continue;
          waiting.delete(waiter);
          waiter.resolve(line);
        }
      }
    },
  });
  return {
    logger,
    lines: () => [...lines],
    line(test) {
      const seen = lines.find(test);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.add({ test, resolve }));
    },
  };
}

/**
 * A fresh database of the test run's PostgreSQL (or the one at `url`) with the service's
 * migrations applied (what its `migrate` command does), opened as the service opens it.
 */
export async function migratedTestDatabase(
  spec: DatabaseSpec,
  url?: string,
): Promise<{ url: string; orm: Orm }> {
  url ??= await createTestDatabase(String(process.env.DATABASE_URL));
  const orm = await openDatabase(url, spec);
  await migrateDatabase(orm, spec);
  return { url, orm };
}
