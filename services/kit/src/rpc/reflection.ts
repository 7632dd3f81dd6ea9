import {
  create,
  createRegistry,
  type DescFile,
  type DescService,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import {
  type ServerReflection,
  type ServerReflectionRequest,
  ServerReflectionResponseSchema,
} from "@testrun/gen/grpc/reflection/v1/reflection_pb";

/**
 * gRPC server reflection v1 over the descriptors of the services a server exposes, enough for
 * grpcurl and `buf curl --list-methods` to discover and call every method without the .proto files.
 */
export function reflectionImpl(services: readonly DescService[]): ServiceImpl<typeof ServerReflection> {
  const registry = createRegistry(...services.map((service) => service.file));
  const filesByName = new Map<string, DescFile>();
  const collect = (file: DescFile) => {
    if (filesByName.has(file.name)) return;
    filesByName.set(file.name, file);
    file.dependencies.forEach(collect);
  };
  for (const service of services) collect(service.file);
  const serviceNames = services.map((service) => service.typeName);

  // A file followed by everything it imports, transitively: what a client needs to decode it.
  const withDependencies = (file: DescFile): Uint8Array[] => {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
      for (const dependency of f.dependencies) visit(dependency);
    };
    visit(file);
    return out;
  };

  const fileOfSymbol = (symbol: string): DescFile | undefined => {
    const desc = registry.get(symbol);
    if (desc) return desc.file;
    // A method is not a registry entry: look up its service.
    const service = registry.getService(symbol.slice(0, symbol.lastIndexOf(".")));
    return service?.methods.some((m) => `${service.typeName}.${m.name}` === symbol)
      ? service.file
      : undefined;
  };

  type Answer = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];
  const answer = (req: ServerReflectionRequest): Answer => {
    const notFound = (what: string): Answer => ({
      case: "errorResponse",
      value: { errorCode: Code.NotFound, errorMessage: `${what} not found` },
    });
    const files = (file: DescFile | undefined, what: string): Answer =>
      file
        ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file) } }
        : notFound(what);
    const request = req.messageRequest;
    switch (request.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: serviceNames.map((name) => ({ name })) } };
      case "fileByFilename":
        return files(filesByName.get(request.value), `file ${request.value}`);
      case "fileContainingSymbol":
        return files(fileOfSymbol(request.value), `symbol ${request.value}`);
      case "fileContainingExtension":
        return notFound(`extension ${request.value.extensionNumber} of ${request.value.containingType}`);
      case "allExtensionNumbersOfType":
        return {
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: request.value, extensionNumber: [] },
        };
      default:
        return {
          case: "errorResponse",
          value: { errorCode: Code.InvalidArgument, errorMessage: "empty reflection request" },
        };
    }
  };

  return {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) {
        yield create(ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(req),
        });
      }
    },
  };
}
