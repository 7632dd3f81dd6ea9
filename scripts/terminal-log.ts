// How `make run` shows its services' lines: one readable line each, the service named, for a person
// at a terminal. The services themselves always write JSON (services/kit/src/logger.ts), as in
// containers; only this terminal form is made here, with pino's own pretty printer.
import { prettyFactory } from "pino-pretty";

/** Wide enough for every service's name (automation, demo-target), so that messages line up. */
const nameWidth = 11;
const named = (service: string) => `${service.padEnd(nameWidth)} `;

export interface TerminalLogOptions {
  /** Colours for the level (a terminal); none when the output goes to a file or a pipe. */
  colorize?: boolean;
  /** Keep the trace and span ids (when traces go to a collector, where they lead). */
  traceIds?: boolean;
}

/**
 * A formatter of one service's output line for the terminal: a JSON log line becomes
 * `[12:03:07.519] INFO: runs        run started {"runId":…}`; anything else (a stack trace on stderr)
 * stays as it is, behind the name of the service that wrote it.
 */
export function terminalLog(options: TerminalLogOptions = {}): (line: string, service: string) => string {
  const pretty = prettyFactory({
    colorize: options.colorize ?? false,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: ["pid", "hostname", "service", ...(options.traceIds ? [] : ["trace_id", "span_id"])].join(","),
    singleLine: true,
    // Only `err` is an error printed over several lines (its stack); other fields stay on the line.
    errorLikeObjectKeys: ["err"],
    messageFormat: (log, messageKey) => `${named(String(log.service))}${String(log[messageKey] ?? "")}`,
  });
  return (line, service) => {
    const entry = parseLogLine(line);
    if (!entry) return `${named(service)}${line}`;
    // Every service names itself; a line of something else is named by the process it came from.
    return pretty({ ...entry, service: entry.service ?? service }).replace(/\n$/, "");
  };
}

/**
 * A log line: a JSON object with a level or a message (the demo target's own lines have no level:
 * info), or undefined for anything else.
 */
function parseLogLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const entry = JSON.parse(line) as unknown;
    if (typeof entry !== "object" || entry === null || !("level" in entry || "msg" in entry))
      return undefined;
    return { level: "info", ...entry };
  } catch {
    return undefined;
  }
}
