// A Playwright trace holds what the test typed (`fill` values in action parameters and in DOM
// snapshots), what the page sent (request bodies in the network log) and what the target answered
// (response bodies): before it leaves the executor, every variable's value is replaced by
// `{{NAME}}` in all of it, with the Redactor the test's summaries use (steps/redaction.ts, through
// Variables). The rules are in docs/runs.md ("Browser steps: what is redacted").
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { crc32, deflateRaw as deflateRawCallback } from "node:zlib";
import { type Unzipped, unzipSync, Zip, type ZipInputFile } from "fflate";
import type { Variables } from "../steps/variables.js";
import { sizeText } from "../steps/wording.js";

export interface TraceLimits {
  /** The trace as Playwright wrote it and as redacted, zipped, at most (BROWSER_TRACE_MAX_BYTES). */
  maxZipBytes: number;
  /** Its entries unzipped, all together, at most. */
  maxUnzippedBytes: number;
}

/** The trace is past a bound: it is not kept (the browser log says so). */
export class TraceTooLarge extends Error {
  override name = "TraceTooLarge";
}

/** How much the entries of a zip of `maxZipBytes` may unzip to (text compresses about this well). */
export const unzipRatio = 4;

/** Pictures: screencast frames, image resources. Kept as they are, like screenshots. */
const imageSignatures = [
  [0x89, 0x50, 0x4e, 0x47], // PNG
  [0xff, 0xd8, 0xff], // JPEG
  [0x47, 0x49, 0x46, 0x38], // GIF
  [0x52, 0x49, 0x46, 0x46], // RIFF (WebP)
];
const isImage = (bytes: Uint8Array) =>
  imageSignatures.some((signature) => signature.every((byte, i) => bytes[i] === byte));

/** Entries written as JSON lines: events of the trace and of its network log. */
const isJsonLines = (name: string) => name.endsWith(".trace") || name.endsWith(".network");

/**
 * Resources are named by the SHA-1 of their content (`resources/<sha1>.<ext>`); a redacted one is
 * renamed after its new content, since the old name is the hash of a text holding a value (a
 * short value could be found again by hashing guesses).
 */
const resourceName = /^resources\/([0-9a-f]{40})(\.[A-Za-z0-9]+)?$/;

const deflateRaw = promisify(deflateRawCallback);

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lenientUtf8 = new TextDecoder("utf-8");

/**
 * The trace with every variable value replaced by `{{NAME}}`:
 * - JSON-lines entries (trace.trace, trace.network): every string of every event, keys included,
 *   as Variables.redactValue does (a line that does not parse is redacted as text);
 * - every other entry that is UTF-8 text (HTML, CSS, scripts, JSON and form bodies): as text;
 * - images (pictures the page loaded; screencast frames, which the executor does not record): kept
 *   as they are;
 * - any other binary entry (fonts, octet-stream bodies): kept when no value is found in it, read as
 *   UTF-8 where it can be; dropped otherwise (the trace viewer then shows that resource missing);
 * - trace.stacks (where in the executor's own code each call was made): dropped.
 */
export async function redactTrace(
  zip: Uint8Array,
  vars: Variables,
  limits: TraceLimits,
): Promise<Uint8Array> {
  if (zip.byteLength > limits.maxZipBytes)
    throw new TraceTooLarge(`the trace is larger than ${sizeText(limits.maxZipBytes)}`);
  const pace = new Pacer();
  // The directory first (names and sizes, nothing inflated), then the entries in batches.
  const listed: { name: string; size: number }[] = [];
  unzipSync(zip, {
    filter: (file) => {
      if (file.name !== "trace.stacks") listed.push({ name: file.name, size: file.originalSize });
      return false;
    },
  });
  const unzippedBytes = listed.reduce((sum, file) => sum + file.size, 0);
  if (unzippedBytes > limits.maxUnzippedBytes)
    throw new TraceTooLarge(`the trace unzips to more than ${sizeText(limits.maxUnzippedBytes)}`);
  const entries: Unzipped = {};
  for (const batch of batches(listed, inflateBatchBytes)) {
    const names = new Set(batch.map((file) => file.name));
    Object.assign(entries, unzipSync(zip, { filter: (file) => names.has(file.name) }));
    await pace.breathe();
  }

  const out = new Map<string, Uint8Array>();
  const renamed = new Map<string, string>();
  for (const [name, bytes] of Object.entries(entries)) {
    if (isJsonLines(name)) continue; // after the resources: they name them
    await pace.breathe();
    if (isImage(bytes)) {
      out.set(name, bytes);
      continue;
    }
    const redacted = redactEntry(bytes, vars);
    if (!redacted) continue;
    const resource = resourceName.exec(name);
    if (resource && redacted !== bytes) {
      const sha1 = createHash("sha1").update(redacted).digest("hex");
      renamed.set(resource[1] as string, sha1);
      out.set(`resources/${sha1}${resource[2] ?? ""}`, redacted);
    } else {
      out.set(name, redacted);
    }
  }
  for (const [name, bytes] of Object.entries(entries)) {
    if (!isJsonLines(name)) continue;
    const lines = lenientUtf8.decode(bytes).split("\n");
    for (const [index, line] of lines.entries()) {
      lines[index] = redactJsonLine(line, vars);
      await pace.breathe();
    }
    out.set(name, Buffer.from(renameResources(lines.join("\n"), renamed), "utf8"));
  }
  const result = await zipEntries(out);
  if (result.byteLength > limits.maxZipBytes)
    throw new TraceTooLarge(`the redacted trace is larger than ${sizeText(limits.maxZipBytes)}`);
  return result;
}

/** Inflated at once, at most (unless one entry is larger): each batch is one stretch of work. */
const inflateBatchBytes = 1024 * 1024;
function* batches<T extends { size: number }>(files: T[], bytes: number): Generator<T[]> {
  let batch: T[] = [];
  let size = 0;
  for (const file of files) {
    if (batch.length > 0 && size + file.size > bytes) {
      yield batch;
      batch = [];
      size = 0;
    }
    batch.push(file);
    size += file.size;
  }
  if (batch.length > 0) yield batch;
}

/**
 * Lets the event loop run every `sliceMs` of work: a trace of tens of MiB takes a second or more to
 * unzip and redact, and the executor's other tests (their browsers, their heartbeats) run meanwhile.
 */
class Pacer {
  static readonly sliceMs = 20;
  #since = performance.now();

  async breathe(): Promise<void> {
    if (performance.now() - this.#since < Pacer.sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}

/**
 * The entries zipped: each deflated by Node's zlib on its thread pool (not on the event loop, and
 * several times faster than deflate in JavaScript), then laid out by fflate's Zip.
 */
async function zipEntries(entries: ReadonlyMap<string, Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const failures: Error[] = [];
  const zip = new Zip((error, data) => {
    if (error) failures.push(error);
    else parts.push(data);
  });
  for (const [filename, bytes] of entries) {
    const deflated = await deflateRaw(bytes, { level: 6 });
    const file: ZipInputFile = { filename, size: bytes.byteLength, crc: crc32(bytes), compression: 8 };
    zip.add(file);
    file.ondata?.(null, deflated, true);
  }
  zip.end();
  if (failures[0]) throw failures[0];
  return Buffer.concat(parts);
}

/** A text entry redacted (the same bytes when nothing changed), a binary one kept or dropped. */
function redactEntry(bytes: Uint8Array, vars: Variables): Uint8Array | undefined {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    // Binary: a value written in it as UTF-8 still decodes as itself among the replaced bytes.
    const readable = lenientUtf8.decode(bytes);
    return vars.redact(readable) === readable ? bytes : undefined;
  }
  const redacted = vars.redact(text);
  return redacted === text ? bytes : Buffer.from(redacted, "utf8");
}

function redactJsonLine(line: string, vars: Variables): string {
  if (line.trim() === "") return line;
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return vars.redact(line);
  }
  // Each string as itself, keys included, before it is escaped again: the line stays JSON that the
  // trace viewer reads.
  return JSON.stringify(vars.redactValue(event));
}

/** Points the events at the renamed resources (their names are 40 hex digits, unique). */
function renameResources(text: string, renamed: ReadonlyMap<string, string>): string {
  if (renamed.size === 0) return text;
  return text.replace(/[0-9a-f]{40}/g, (sha1) => renamed.get(sha1) ?? sha1);
}
