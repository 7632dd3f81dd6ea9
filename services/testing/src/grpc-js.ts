// A subpath of its own (@testrun/testing/grpc-js), not in @testrun/testing: only the wire tests
// need grpc-js and proto-loader, and the other tests need not load them.
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { repoRoot } from "./process.js";

/**
 * A client of `service` (`package.Service`) as another codebase builds it: @grpc/grpc-js from the
 * .proto files of proto/ alone, with @grpc/proto-loader. What proves a service's wire: the real
 * socket, HTTP/2 and gRPC framing that in-process tests skip (docs/development.md, "Tests").
 */
export function grpcJsClient(protoFile: string, service: string, address: string): grpc.Client {
  const definition = protoLoader.loadSync(protoFile, {
    includeDirs: [`${repoRoot}proto`],
    longs: String,
    enums: String,
    defaults: true,
  });
  let loaded: unknown = grpc.loadPackageDefinition(definition);
  for (const part of service.split(".")) loaded = (loaded as Record<string, unknown>)[part];
  const Client = loaded as grpc.ServiceClientConstructor;
  return new Client(address, grpc.credentials.createInsecure());
}

/** Metadata carrying `authorization: Bearer <token>`, as services present their token. */
export function bearerMetadata(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

/** Calls a unary method of a grpc-js client, resolving with the error or the response. */
export function callGrpcJs(
  client: grpc.Client,
  method: string,
  request: object,
  metadata = new grpc.Metadata(),
): Promise<{ error: grpc.ServiceError | null; response: unknown }> {
  return new Promise((resolve) => {
    (client as unknown as Record<string, (...args: unknown[]) => void>)[method]?.(
      request,
      metadata,
      (error: grpc.ServiceError | null, response: unknown) => resolve({ error, response }),
    );
  });
}
