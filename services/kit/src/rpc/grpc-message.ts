import type { Http2ServerRequest, Http2ServerResponse, OutgoingHttpHeaders } from "node:http2";

/**
 * gRPC's own percent-encoding of `grpc-message`: only '%' and bytes outside printable ASCII
 * (PROTOCOL-HTTP2.md, "Status-Message").
 */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(message)) {
    out +=
      byte < 0x20 || byte > 0x7e || byte === 0x25
        ? `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
        : String.fromCharCode(byte);
  }
  return out;
}

function reencode(headers: unknown): void {
  if (!headers || typeof headers !== "object") return;
  const record = headers as OutgoingHttpHeaders;
  const message = record["grpc-message"];
  if (typeof message === "string") record["grpc-message"] = encodeGrpcMessage(decodeURIComponent(message));
}

type NodeHandler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

/**
 * connect-node percent-encodes `grpc-message` with encodeURIComponent, escaping ':' ',' '/' and
 * friends; @grpc/grpc-js decodes it with decodeURI, which leaves those escaped, so a grpc-js
 * client would read "credits%3A 3". Re-encoding the header the way the gRPC spec says makes both
 * decoders agree.
 */
export function withSpecGrpcMessage(handler: NodeHandler): NodeHandler {
  return (req, res) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: Http2ServerResponse, ...args: unknown[]) {
      for (const arg of args) reencode(arg);
      return (writeHead as (...a: unknown[]) => Http2ServerResponse).apply(this, args);
    } as typeof res.writeHead;
    const addTrailers = res.addTrailers;
    res.addTrailers = function (this: Http2ServerResponse, trailers: OutgoingHttpHeaders) {
      reencode(trailers);
      return addTrailers.call(this, trailers);
    };
    handler(req, res);
  };
}
