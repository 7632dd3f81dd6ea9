import { EventEmitter } from "node:events";
import { trace } from "@opentelemetry/api";
import { type Logger, pino } from "pino";

export type { Logger } from "pino";

// Secrets must never be logged in the first place; redaction is the second line of defence
// against an object logged whole by mistake.
const secretFields = ["secret", "token", "password", "authorization", "value", "apiKey", "x-api-key"];
const redactPaths = secretFields.flatMap((field) => [`["${field}"]`, `*["${field}"]`, `*.*["${field}"]`]);

/**
 * Anything shaped like an API key secret (docs/keys.md, "Format and storage": `trk_` and base62)
 * or a content token's (`trc_`, "Content tokens"), whole or cut short. Keys travel in headers, but
 * a person may paste one where a run id goes.
 */
const keyShaped = /tr[kc]_[0-9A-Za-z]*/gi;

/** A percent-escape of a letter, digit or underscore: what a key is made of. */
const escapedKeyCharacter = /%([0-9A-Fa-f]{2})/g;
const unescapeKeyCharacters = (text: string) =>
  text.replace(escapedKeyCharacter, (sequence, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return /\w/.test(character) ? character : sequence;
  });

/**
 * `text` (a request's path, say) with every key-shaped part replaced, fit for a log line or an
 * error. Letters, digits and underscores written as percent-escapes (`trk%5F…`, `%74rk_…`) are read
 * as themselves first: a path is logged as it arrived, undecoded, and an escaped key is still a key.
 */
export function withoutKeys(text: string): string {
  const read = unescapeKeyCharacters(text);
  const redacted = read.replace(keyShaped, (secret) => `${secret.slice(0, 3).toLowerCase()}_[redacted]`);
  return redacted === read ? text : redacted;
}

/**
 * Structured JSON logs on stdout, one object a line, each carrying the service name and, inside a
 * traced call, the trace and span ids so a log line leads to its trace.
 *
 * Written asynchronously: a synchronous write (a system call) per line cost each service several
 * per cent of its CPU under load (docs/development.md, "Benchmarks"). Lines logged while a write is
 * in flight go out together with the next one. A graceful exit waits for them (`exitOnceLogged`);
 * on any other exit pino flushes what is left (not on SIGKILL, a V8 out-of-memory abort or a native
 * crash: then the lines of one batch are lost).
 */
export function createLogger(
  service: string,
  level = "info",
  /** Where the lines go instead of stdout: a test's in-process service keeps them to read. */
  destination?: { write(line: string): void },
): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactPaths, censor: "[redacted]" },
      mixin() {
        const span = trace.getActiveSpan();
        if (!span) return {};
        const { traceId, spanId } = span.spanContext();
        return { trace_id: traceId, span_id: spanId };
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * Exits with `code` once every line logged so far is written, or after `boundMs`. pino's own flush
 * at exit is synchronous and does not wait for a write still in flight, so a plain `process.exit`
 * can put the last line before the one being written ("stopped" before "closing"), or, when the
 * reader of stdout is behind, lose lines or cut one in half (services/kit/test/logger.test.ts).
 */
export async function exitOnceLogged(logger: Logger, code: number, boundMs = 1000): Promise<never> {
  const destination = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    | { write(chunk: string): unknown }
    | undefined;
  // Asynchronous stdout (sonic-boom) says "drain" when its last write finishes. An empty write makes
  // sure one is coming even when the last line was below LOG_LEVEL and nothing is in flight.
  if (destination instanceof EventEmitter) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, boundMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      destination.once("drain", done);
      destination.once("error", done);
      destination.once("close", done);
      try {
        destination.write("");
      } catch {
        done(); // Already closed: nothing more can be written.
      }
    });
  }
  process.exit(code);
}
