import { gzipSync } from "node:zlib";

/**
 * A gzip body that inflates to `inflatedMiB` MiB of zeros: about 1 KiB per MiB, gzip's best ratio.
 * What the body-size tests and scripts/body-bomb.ts send (docs/security.md, "Resource limits").
 */
export function gzipBomb(inflatedMiB: number): Buffer {
  return gzipSync(Buffer.alloc(inflatedMiB * 1024 * 1024), { level: 9 });
}
