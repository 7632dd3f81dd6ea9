import { EventEmitter, on } from "node:events";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  type HealthCheckRequest,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "@testrun/gen/grpc/health/v1/health_pb";

export { HealthCheckResponse_ServingStatus as ServingStatus } from "@testrun/gen/grpc/health/v1/health_pb";

/**
 * Serving status of the process ("" ) and of each of its services, as grpc.health.v1 reports it.
 * Kubernetes' gRPC probes ask for "" (the whole process).
 */
export class HealthRegistry {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly changes = new EventEmitter();
  private readonly closed = new AbortController();

  constructor(serviceNames: readonly string[]) {
    this.changes.setMaxListeners(0);
    for (const name of ["", ...serviceNames]) this.statuses.set(name, ServingStatus.NOT_SERVING);
  }

  /** Sets every known service (and the process) to a status, telling every watcher. */
  setAll(status: ServingStatus): void {
    for (const name of this.statuses.keys()) this.statuses.set(name, status);
    this.changes.emit("change");
  }

  /**
   * Sets one name's status (added when new: a part of the service that is not a gRPC service of
   * its own, such as a kind of test an executor takes), telling every watcher.
   */
  set(service: string, status: ServingStatus): void {
    if (this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    this.changes.emit("change");
  }

  status(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Ends every Watch stream, so a shutting-down server is not held open by watchers. */
  close(): void {
    this.closed.abort();
  }

  /** The grpc.health.v1.Health implementation over this registry. */
  impl(): ServiceImpl<typeof Health> {
    const response = (status: ServingStatus) => create(HealthCheckResponseSchema, { status });
    return {
      check: (req) => {
        const status = this.status(req.service);
        if (status === undefined) throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
        return response(status);
      },
      list: () => ({
        statuses: Object.fromEntries([...this.statuses].map(([name, status]) => [name, response(status)])),
      }),
      watch: async function* (this: HealthRegistry, req: HealthCheckRequest, ctx: HandlerContext) {
        const signal = AbortSignal.any([ctx.signal, this.closed.signal]);
        let last: ServingStatus | undefined;
        const current = () => this.status(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
        try {
          // Yield the current status, then one message per change, until the caller or the server ends it.
          for (let status = current(); ; status = current()) {
            if (status !== last) yield response(status);
            last = status;
            if (this.closed.signal.aborted) return;
            await on(this.changes, "change", { signal }).next();
          }
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
      }.bind(this),
    };
  }
}
