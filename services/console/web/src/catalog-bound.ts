// The bound on the web app's messages that carry test cases whole (ImportContent, CreateTestCase,
// UpdateTestCase): the console reads them up to the catalog's own bound (catalogReadMaxBytes,
// services/console/src/http/app.ts; docs/security.md, "Resource limits"), every other call 1 MiB.
import { type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";

/** As much as the catalog takes in one call, 8 MiB: what the console reads of these messages. */
export const catalogMessageBytes = 8 * 1024 * 1024;

/**
 * A request's size as the console and the catalog read it: in binary protobuf, the encoding
 * binaryTransport (api.ts) sends it in and the catalog's own (JSON would be about 2.5 times larger).
 */
export const binaryBytes = <Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>) =>
  toBinary(schema, message).length;
