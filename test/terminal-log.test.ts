// `make run`'s terminal: each service's JSON log line printed readably, the service named
// (scripts/terminal-log.ts). The lines are made by the services' own logger (kit logger.ts).
import { createLogger } from "@testrun/kit";
import { expect } from "chai";
import { terminalLog } from "../scripts/terminal-log.js";

/** The lines a service's logger writes, as the service would write them to stdout. */
function logged(service: string, write: (logger: ReturnType<typeof createLogger>) => void): string[] {
  const lines: string[] = [];
  const logger = createLogger(service, "info", {
    write: (text) => lines.push(...text.split("\n").filter(Boolean)),
  });
  write(logger);
  return lines;
}

describe("make run's terminal form of the services' logs", () => {
  const format = terminalLog();

  it("prints a log line on one line: its time, level, service and message, then its fields", () => {
    const [line] = logged("runs", (logger) =>
      logger.info({ runId: "run_01m8h0k9jq59h5kem3nmzn4eks", tests: 2 }, "run started"),
    );
    const shown = format(String(line), "runs");
    expect(shown).to.match(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: runs {8}run started \{"runId":"run_01m8h0k9jq59h5kem3nmzn4eks","tests":2\}$/,
    );
  });

  it("names the service of every line, warnings and lines that are not JSON included", () => {
    const [warning] = logged("automation", (logger) =>
      logger.warn({ deliveryId: "dlv_1", reason: "answered 500" }, "webhook delivery failed; retrying"),
    );
    expect(format(String(warning), "automation")).to.match(
      /\] WARN: automation {2}webhook delivery failed; retrying \{"deliveryId":"dlv_1","reason":"answered 500"\}$/,
    );
    // The demo target's own lines: JSON without a level or a time.
    expect(format('{"service":"demo-target","msg":"listening","port":8090}', "demo-target")).to.equal(
      'INFO: demo-target listening {"port":8090}',
    );
    // What a process writes to stderr outside its logger (a crash's stack) stays as it is, named.
    expect(format("    at main (file:///app/main.js:1:1)", "executor")).to.equal(
      "executor        at main (file:///app/main.js:1:1)",
    );
  });

  it("keeps an error's stack, under its line", () => {
    const [line] = logged("gateway", (logger) => logger.error({ err: new Error("boom") }, "request failed"));
    const shown = format(String(line), "gateway");
    expect(shown.split("\n")[0]).to.match(/\] ERROR: gateway {5}request failed/);
    expect(shown).to.contain("Error: boom");
  });

  it("leaves out what only a trace viewer uses, unless traces are sent somewhere", () => {
    const line = JSON.stringify({
      level: "info",
      time: "2026-11-28T12:00:00.000Z",
      service: "runs",
      trace_id: "ab12",
      span_id: "cd34",
      msg: "x",
    });
    expect(format(line, "runs")).not.to.contain("ab12");
    expect(terminalLog({ traceIds: true })(line, "runs")).to.contain('"trace_id":"ab12"');
  });
});
