import { createRouterTransport, type Transport } from "@connectrpc/connect";
import { bearerTokenInterceptor, type CallerIdentity, rpcRouting, type ServiceBinding } from "@testrun/kit";
import type { Logger } from "pino";

/**
 * The server side of `inProcessRpc`: the services behind a router transport with the real server's
 * routes, gate and interceptors, called with `token` (none: anonymous). in-process.ts loads this
 * module by `import()`, see there.
 */
export function routerTransport(
  services: readonly ServiceBinding[],
  tokens: Partial<Record<CallerIdentity, string>>,
  logger: Logger,
  token: string | undefined,
): Transport {
  const routing = rpcRouting({ services, tokens, logger });
  return createRouterTransport(routing.routes, {
    router: routing.options,
    transport: { interceptors: token ? [bearerTokenInterceptor(token)] : [] },
  });
}
