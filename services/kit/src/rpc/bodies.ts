import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";

/**
 * The largest request message a service port reads, after decompression (connect's `readMaxBytes`;
 * its default is 4 GiB). Service requests are small but for the catalog's CreateTestCase and
 * UpdateTestCase: 100 steps with URLs, headers and checks come to about 0.3 MiB, and a step's
 * request body may hold up to 1 MiB, so a test case with several full-size bodies still fits
 * (measured in services/kit/test/bodies.test.ts; docs/security.md, "Resource limits"). A larger
 * message is refused with RESOURCE_EXHAUSTED before it is parsed.
 */
export const serviceReadMaxBytes = 8 * 1024 * 1024;

/** The headers (and the Connect GET query parameter) in which each protocol names a request's compression. */
const encodingHeaders = ["content-encoding", "connect-content-encoding", "grpc-encoding"];

/**
 * Refuses, from its headers and before its body is read, a request compressed other than with one
 * of `accepted`: INVALID_ARGUMENT. With none accepted, for callers that have no reason to compress
 * (browsers, probes), a small body cannot inflate into a large one. (connect itself answers an
 * encoding it does not know with UNIMPLEMENTED, HTTP 501: a server fault to anyone reading the
 * status, where the caller chose the encoding.)
 */
export function refuseCompressedBodies(context: HandlerContext, accepted: readonly string[] = []): void {
  const named = [
    ...encodingHeaders.map((name) => context.requestHeader.get(name)),
    context.requestMethod === "GET" ? new URL(context.url).searchParams.get("compression") : null,
  ];
  for (const encoding of named) {
    const name = encoding?.trim().toLowerCase();
    if (!name || name === "identity" || accepted.includes(name)) continue;
    throw new ConnectError(
      accepted.length
        ? `request bodies compressed with "${name}" are not accepted here (only ${accepted.join(", ")})`
        : "compressed request bodies are not accepted here",
      Code.InvalidArgument,
    );
  }
}

/** What connect-node 2.2 calls a request body that is not protobuf, or a compressed one that does not inflate. */
const unparsable = (error: ConnectError) =>
  error.code === Code.Internal &&
  (error.rawMessage.startsWith("parse binary: ") || error.rawMessage === "decompression failed");

/**
 * A request body that does not parse is the caller's mistake: INVALID_ARGUMENT, where connect-node
 * 2.2 answers INTERNAL (HTTP 500) for a body that is not protobuf or a gzip stream that does not
 * inflate (it answers INVALID_ARGUMENT for bad JSON already). connect offers no hook between
 * parsing a request and answering it, but in every protocol it aborts the call's context with the
 * error just before writing it out; this listens for that abort (from a request gate, which sees
 * the context first) and corrects the error's code in place.
 */
export function unparsableBodyIsInvalidArgument(context: HandlerContext): void {
  const { signal } = context;
  signal.addEventListener(
    "abort",
    () => {
      const reason: unknown = signal.reason;
      if (!(reason instanceof ConnectError) || !unparsable(reason)) return;
      // The fields are readonly in the types only: the error object is the one about to be written.
      const writable = reason as { code: Code; message: string };
      writable.code = Code.InvalidArgument;
      writable.message = `[invalid_argument] ${reason.rawMessage}`;
    },
    { once: true },
  );
}
