import type { ServerResponse } from "node:http";

/**
 * Ends `res` when a write of it has waited `stallMs` for the client to take what was written
 * before ('drain'): a browser that stopped reading (a frozen tab, a paused socket, an attacker)
 * would otherwise keep the response, and with it a WatchRun stream's slot here and at the runs
 * service, for as long as its socket stays open. Node's own timeouts do not see this: the
 * request was read in full, and a live stream is quiet between changes anyway. Destroying the
 * response closes the connection (a streamed HTTP/1.1 answer cannot be ended otherwise): the
 * Connect handler's signal is aborted, the stream's slot released (rpc/run-handlers.ts) and the
 * pending write fails. 'drain' comes once a write is handed to the socket whole, and a write is
 * one message: the bound must let a slow link take the largest message (a run's first, up to
 * about 1 MB); a reader of small changes drains at once (docs/security.md, "Resource limits").
 */
export function endStalledWrites(res: ServerResponse, stallMs: number): void {
  let timer: NodeJS.Timeout | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const write = res.write;
  res.write = function (this: ServerResponse, ...args: Parameters<ServerResponse["write"]>) {
    const flushed = (write as (...a: typeof args) => boolean).apply(this, args);
    if (!flushed && timer === undefined && !res.destroyed)
      timer = setTimeout(() => {
        timer = undefined;
        // The pending write then fails (ECANCELED), which connect-node reports to the handler.
        res.destroy();
      }, stallMs);
    return flushed;
  } as ServerResponse["write"];
  res.on("drain", clear);
  res.once("close", clear);
}
