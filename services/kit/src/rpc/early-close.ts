import http2, { type Http2ServerRequest, type Http2ServerResponse } from "node:http2";

type NodeHandler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

/**
 * Closes a stream whose answer was sent before its request body was read to the end: a call
 * refused from its headers (the token gate reads no body), or one refused past the body bound.
 * Without this the client's half of the stream stays open for as long as the client likes, holding
 * the stream and what it buffers (docs/security.md, "Resource limits"). RFC 9113 §8.1 lets a
 * server answer early and then reset with NO_ERROR.
 *
 * The reset waits for the whole answer, gRPC's trailers (grpc-status) included: a client that
 * sees the reset first would report the call as failed with no status.
 */
export function withEarlyClose(handler: NodeHandler): NodeHandler {
  return (req, res) => {
    const end = res.end;
    res.end = function (this: Http2ServerResponse, ...args: unknown[]) {
      // Node's compatibility layer answers "wantTrailers" (its listener, added with the response,
      // runs before this one) by handing the trailers to nghttp2 on the next turn (setImmediate).
      // Resetting on a later turn queues the RST_STREAM behind them; resetting sooner drops them.
      req.stream.once("wantTrailers", () => {
        setImmediate(() => {
          if (!req.readableEnded && !req.stream.closed) req.stream.close(http2.constants.NGHTTP2_NO_ERROR);
        });
      });
      return (end as (...a: unknown[]) => Http2ServerResponse).apply(this, args);
    } as typeof res.end;
    handler(req, res);
  };
}
