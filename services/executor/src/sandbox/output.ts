// A child's stdout or stderr kept up to a cap: the rest is read and dropped, so a spec printing
// without end neither fills the executor's memory nor blocks on a full pipe.
import type { Readable } from "node:stream";

export interface CappedOutput {
  text(): string;
  readonly overflowed: boolean;
}

export function capOutput(stream: Readable, maxBytes: number): CappedOutput {
  const chunks: Buffer[] = [];
  let kept = 0;
  let overflowed = false;
  stream.on("data", (chunk: Buffer) => {
    if (kept >= maxBytes) {
      overflowed = true;
      return;
    }
    const part = chunk.subarray(0, maxBytes - kept);
    if (part.length < chunk.length) overflowed = true;
    chunks.push(part);
    kept += part.length;
  });
  return {
    text: () => Buffer.concat(chunks).toString("utf8"),
    get overflowed() {
      return overflowed;
    },
  };
}
