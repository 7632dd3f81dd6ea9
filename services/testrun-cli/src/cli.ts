// `testrun`: the commands (usage in help.ts, behaviour in docs/pipelines.md). main() takes the
// process's surroundings as arguments, so the bin (bin.ts) and the GitHub Action (action.ts) share it.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  ApiError,
  formatBytes,
  NetworkError,
  type Run,
  startSafely,
  TestrunClient,
  version,
  withRetries,
} from "@testrun/api-client";
import type { TestrunApi } from "@testrun/mcp-tools";
import { type Command, parseCommand, UsageError, type WaitFlags } from "./args.js";
import { artifactsOf, attachmentPath, downloadArtifacts } from "./artifacts.js";
import {
  type ComparisonReport,
  comparisonReport,
  newFailuresOnlyExit,
  unknownComparison,
} from "./comparison.js";
import { formatDuration } from "./duration.js";
import { explain } from "./errors.js";
import { failingTests, quarantineLines } from "./health.js";
import { usage } from "./help.js";
import { ExitCode, exitCodeOf, signalExitCode } from "./outcome.js";
import {
  failureLines,
  flakyWarning,
  type Output,
  Progress,
  screenshotLine,
  statusLine,
  testLine,
} from "./progress.js";
import { pushLines, specDocument } from "./push.js";
import { writeReports } from "./reports.js";
import { waitForRun } from "./wait.js";

export interface Io {
  env: Record<string, string | undefined>;
  stdout: Output;
  stderr: Output;
  /** Aborted, with the signal's name (SIGINT, SIGTERM) as its reason, when the process must stop. */
  stop?: AbortSignal;
  /**
   * Serves the MCP tools on this process's stdin and stdout until the client closes stdin
   * (`testrun mcp`, mcp/stdio.ts). Only the `testrun` process has it (bin.ts): the GitHub Action's
   * bundle leaves the MCP SDK out.
   */
  serveMcp?: (api: TestrunApi, options: { stop?: AbortSignal }) => Promise<void>;
}

export interface Result {
  code: number;
  /** The run the command started or followed, as last read. */
  run?: Run;
}

/** Reads that are not part of a wait give up after this long of network errors and 5xx. */
const readOutageMs = 30_000;

export async function main(argv: string[], io: Io): Promise<Result> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`testrun: ${error.message}\nRun "testrun --help" for usage.\n`);
    return { code: ExitCode.usage };
  }
  if (command.name === "help") {
    io.stdout.write(usage);
    return { code: ExitCode.passed };
  }
  if (command.name === "version") {
    io.stdout.write(`testrun ${version}\n`);
    return { code: ExitCode.passed };
  }
  const baseUrl = io.env.TESTRUN_URL?.trim();
  // push takes the content token (import only), every other command the API key: never each other's.
  const secretName = command.name === "push" ? "TESTRUN_CONTENT_TOKEN" : "TESTRUN_API_KEY";
  const apiKey = io.env[secretName]?.trim();
  const missing = [!baseUrl && "TESTRUN_URL", !apiKey && secretName].filter(Boolean);
  if (missing.length) {
    io.stderr.write(`testrun: set ${missing.join(" and ")} (see testrun --help)\n`);
    return { code: ExitCode.usage };
  }
  if (!/^https?:\/\/[^/]/.test(baseUrl ?? "") || !URL.canParse(baseUrl ?? "")) {
    io.stderr.write(`testrun: TESTRUN_URL "${baseUrl}" is not an http(s) address\n`);
    return { code: ExitCode.usage };
  }
  const client = new TestrunClient({
    baseUrl: baseUrl ?? "",
    apiKey: apiKey ?? "",
    userAgent: `testrun-cli/${version}`,
  });
  if (command.name === "mcp") {
    if (!io.serveMcp) {
      io.stderr.write("testrun: mcp is served by the testrun command only\n");
      return { code: ExitCode.usage };
    }
    // stdout is the protocol's: nothing else may be written to it.
    await io.serveMcp(client, { ...(io.stop && { stop: io.stop }) });
    return { code: ExitCode.passed };
  }
  if (command.name === "push") return push(client, command, io);
  // With `--json -` the run's JSON owns stdout: the human lines go to stderr.
  const human = "json" in command && command.json === "-" ? io.stderr : io.stdout;
  const session = new Session(client, { ...io, stdout: human, json: io.stdout });
  try {
    return await session.execute(command);
  } catch (error) {
    const signalled = io.stop?.aborted ? signalExitCode[String(io.stop.reason)] : undefined;
    if (signalled !== undefined) return { code: signalled };
    if (!(error instanceof ApiError || error instanceof NetworkError || error instanceof Error)) throw error;
    io.stderr.write(`testrun: ${explain(error)}\n`);
    return { code: ExitCode.notStarted, ...(session.run && { run: session.run }) };
  }
}

/**
 * `testrun push`: the folder's specs as one document, sent once (an import is all or nothing, and
 * the same document again changes nothing, so a failed push is simply run again). The token is
 * only ever sent in the Authorization header: never printed, not even in part.
 */
async function push(
  client: TestrunClient,
  command: Extract<Command, { name: "push" }>,
  io: Io,
): Promise<Result> {
  const human = command.json === "-" ? io.stderr : io.stdout;
  try {
    const { document, specs, helpers } = await specDocument(command.folder, command.tags);
    human.write(
      `Pushing ${specs} spec file${specs === 1 ? "" : "s"} (with ${helpers} helper file${helpers === 1 ? "" : "s"}) from ${command.folder}${command.dryRun ? " (dry run)" : ""}\n`,
    );
    const result = await client.importContent(document, command.dryRun, io.stop ? { signal: io.stop } : {});
    for (const line of pushLines(result)) human.write(`${line}\n`);
    if (command.json === "-") io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (command.json) writeFileSync(resolve(command.json), `${JSON.stringify(result, null, 2)}\n`);
    return { code: ExitCode.passed };
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`testrun: ${error.message}\n`);
      return { code: ExitCode.usage };
    }
    const signalled = io.stop?.aborted ? signalExitCode[String(io.stop.reason)] : undefined;
    if (signalled !== undefined) return { code: signalled };
    io.stderr.write(`testrun: ${explain(error, "push")}\n`);
    // A refused document names each problem by its field: one line each.
    const violations = error instanceof ApiError ? error.body.violations : undefined;
    if (Array.isArray(violations))
      for (const v of violations) io.stderr.write(`  ${v.field || "the document"}: ${v.problem}\n`);
    return { code: ExitCode.notStarted };
  }
}

class Session {
  /** The run being started or followed, as last read. */
  run: Run | undefined;

  constructor(
    private readonly client: TestrunClient,
    private readonly io: Io & { json: Output },
  ) {}

  private say(line: string) {
    this.io.stdout.write(`${line}\n`);
  }

  /** A read, retried through network errors, 5xx and 429, and given up on a signal. */
  private read<T>(call: (options: { signal?: AbortSignal }) => Promise<T>): Promise<T> {
    const options = this.io.stop ? { signal: this.io.stop } : {};
    return withRetries(() => call(options), {
      outageMs: readOutageMs,
      ...(this.io.stop && { signal: this.io.stop }),
      onRetry: (reason, delay) => this.say(`  (${reason}; trying again in ${formatDuration(delay)})`),
    });
  }

  async execute(command: Exclude<Command, { name: "help" | "version" | "mcp" | "push" }>): Promise<Result> {
    switch (command.name) {
      case "run":
      case "rerun":
        return this.start(command);
      case "wait":
        this.run = await this.read((o) => this.client.getRun(command.runId, undefined, o));
        this.say(`Run ${this.run.id} "${this.run.name}": ${this.run.url}`);
        return this.follow(this.run, command);
      case "status":
        return this.status(command.runId, command.json);
      case "cancel":
        return this.cancelCommand(command.runId);
      case "list":
        return this.list(command);
    }
  }

  private async start(command: Extract<Command, { name: "run" | "rerun" }>): Promise<Result> {
    const outcome = await startSafely(
      this.client,
      (idempotencyKey) =>
        command.name === "run"
          ? this.client.startRun(command.body, { idempotencyKey })
          : this.client.rerunRun(command.runId, command.failedOnly, { idempotencyKey }),
      { onRetry: (reason, delay) => this.say(`  (${reason}; trying again in ${formatDuration(delay)})`) },
    );
    let run: Run;
    if (outcome.kind === "follow") {
      // Started but not read back: follow that run, never post again (docs/rest-api.md, "Runs").
      this.say(`Run ${outcome.id} was started (the API could not read it back at once): ${outcome.url}`);
      run = await this.read((o) => this.client.getRun(outcome.id, undefined, o));
    } else {
      run = outcome.run;
      this.say(`Run ${run.id} "${run.name}": ${run.url}`);
      if (outcome.replayed)
        this.say("  (the API answered with the run an earlier attempt of this command started)");
    }
    this.run = run;
    if (!command.wait) {
      this.say(statusLine(run));
      writeReports(
        run,
        { ...(command.json && { json: command.json }) },
        { ...this.io, stdout: this.io.json },
      );
      return { code: ExitCode.passed, run };
    }
    return this.follow(run, command);
  }

  /** Waits for the run, reports it and answers with its exit code. */
  private async follow(initial: Run, flags: WaitFlags): Promise<Result> {
    const progress = new Progress(this.io.stdout);
    const stop = this.io.stop;
    if (stop?.aborted) return this.interrupted(initial, flags, progress);
    progress.update(initial);
    let result: Awaited<ReturnType<typeof waitForRun>>;
    try {
      result = await waitForRun(this.client, initial, {
        deadline: Date.now() + flags.timeoutMs,
        ...(stop && { signal: stop }),
        onUpdate: (run) => {
          this.run = run;
          progress.update(run);
        },
        onRetry: (reason, delay) => progress.print(`  (${reason}; trying again in ${formatDuration(delay)})`),
      });
    } catch (error) {
      if (stop?.aborted) return this.interrupted(this.run ?? initial, flags, progress);
      progress.stop();
      throw error;
    }
    progress.stop();
    let run = result.run;
    this.run = run;
    const targets = {
      ...(flags.junit && { junit: flags.junit }),
      ...(flags.json && { json: flags.json }),
      ...(this.io.env.GITHUB_STEP_SUMMARY && { stepSummary: this.io.env.GITHUB_STEP_SUMMARY }),
    };
    if (result.timedOut) {
      this.say(`Timed out after ${formatDuration(flags.timeoutMs)}: run ${run.id} is still ${run.status}.`);
      if (flags.cancelOnTimeout) {
        run = (await this.cancel(run.id)) ?? run;
        this.run = run;
      } else {
        this.say(`It goes on; cancel it with: testrun cancel ${run.id}`);
      }
      const attachments = flags.artifacts ? await this.downloadArtifacts(run, flags.artifacts) : undefined;
      writeReports(
        run,
        targets,
        { ...this.io, stdout: this.io.json },
        { timedOut: !run.finished, ...(attachments && { attachments }) },
      );
      return { code: ExitCode.timedOut, run };
    }
    this.say(statusLine(run));
    for (const test of failingTests(run.tests)) for (const line of failureLines(test)) this.say(line);
    const flaky = flakyWarning(run, flags.failOnFlaky ?? false);
    if (flaky) this.say(flaky);
    // Failures of quarantined cases, which leave the run PASSED (exit 0): named, with why.
    for (const line of quarantineLines(run)) this.say(line);
    this.say(run.url);
    const attachments = flags.artifacts ? await this.downloadArtifacts(run, flags.artifacts) : undefined;
    const comparison = await this.compare(run, flags);
    writeReports(
      run,
      targets,
      { ...this.io, stdout: this.io.json },
      { ...(attachments && { attachments }), ...(comparison && { comparison }) },
    );
    return this.ended(
      run,
      flags,
      exitCodeOf(run, flags.allowSkipped, flags.failOnFlaky ?? false),
      comparison,
    );
  }

  /**
   * The finished run against its base (GET /v1/runs/{id}/comparison), for the last line, the job
   * summary and --fail-on new-failures; undefined for a run that neither passed nor failed, and
   * from a gateway older than comparisons (404 for a run just read) unless --fail-on needs it. A
   * comparison that cannot be read is said and counts every failure as new: it never hides one.
   */
  private async compare(run: Run, flags: WaitFlags): Promise<ComparisonReport | undefined> {
    if (run.status !== "PASSED" && run.status !== "FAILED") return undefined;
    try {
      return comparisonReport(run, await this.read((o) => this.client.compareRuns(run.id, undefined, o)));
    } catch (error) {
      if (this.io.stop?.aborted) throw error;
      if (!(error instanceof ApiError || error instanceof NetworkError)) throw error;
      if (error instanceof ApiError && error.status === 404 && !flags.failOn) return undefined;
      return unknownComparison(run, explain(error));
    }
  }

  /** Ends a finished run: --fail-on new-failures decides its code, and the comparison is the last line. */
  private ended(run: Run, flags: WaitFlags, code: number, comparison: ComparisonReport | undefined): Result {
    let exit = code;
    if (flags.failOn === "new-failures" && comparison) {
      const decided = newFailuresOnlyExit(code, run, comparison);
      if (decided.warning) this.say(decided.warning);
      exit = decided.code;
    }
    if (comparison) this.say(comparison.line);
    return { code: exit, run };
  }

  /**
   * --artifacts DIR: downloads the artifacts of the run's final tests into DIR. Answers each
   * downloaded file as the JUnit report names it. A download that fails is said on stderr and
   * changes nothing else: the exit code stays the run's.
   */
  private async downloadArtifacts(run: Run, dir: string): Promise<Map<string, string>> {
    const listed = run.tests.reduce((count, test) => count + artifactsOf(test).length, 0);
    if (!listed) {
      this.say("Artifacts: the run's tests left none");
      return new Map();
    }
    const downloads = await downloadArtifacts(this.client, run, dir, {
      ...(this.io.stop && { signal: this.io.stop }),
      onFailure: (artifact, test, reason) =>
        this.io.stderr.write(
          `testrun: could not download artifact ${artifact.id} (${artifact.kind} "${artifact.name}" of test "${test.name}"): ${reason}\n`,
        ),
      onRetry: (reason, delay) => this.say(`  (${reason}; trying again in ${formatDuration(delay)})`),
    });
    const failed = downloads.failed ? `; ${downloads.failed} could not be downloaded` : "";
    this.say(
      `Artifacts: ${downloads.files.size} of ${listed} files (${formatBytes(downloads.bytes)}) in ${resolve(dir)}${failed}`,
    );
    return new Map(
      [...downloads.files].map(([id, file]) => [id, attachmentPath(file, this.io.env)] as const),
    );
  }

  /** SIGINT/SIGTERM while waiting: cancel the run (unless --detach), then end. */
  private async interrupted(run: Run, flags: WaitFlags, progress: Progress): Promise<Result> {
    progress.stop();
    const signal = String(this.io.stop?.reason ?? "SIGTERM");
    if (flags.detach) {
      this.say(`${signal}: stopped waiting; run ${run.id} goes on (--detach): ${run.url}`);
    } else {
      this.say(`${signal}: cancelling run ${run.id}`);
      this.run = (await this.cancel(run.id, 5_000)) ?? run;
    }
    return { code: signalExitCode[signal] ?? 143, ...(this.run && { run: this.run }) };
  }

  /** POST /v1/runs/:id/cancel; says what happened. The run as cancelled, or undefined. */
  private async cancel(id: string, outageMs = readOutageMs): Promise<Run | undefined> {
    try {
      const run = await withRetries(() => this.client.cancelRun(id), { outageMs, maxDelayMs: 2_000 });
      const notRun = run.tests.filter((t) => t.status === "SKIPPED").length;
      this.say(`Cancelled run ${id}: ${statusLine(run)}; ${notRun} test(s) not run, their credits refunded`);
      return run;
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        this.say(`Run ${id} had already finished: ${error.message}`);
        return undefined;
      }
      this.io.stderr.write(`testrun: could not cancel run ${id}: ${explain(error)}\n`);
      return undefined;
    }
  }

  private async cancelCommand(id: string): Promise<Result> {
    try {
      const run = await withRetries(() => this.client.cancelRun(id), { outageMs: readOutageMs });
      this.say(`Cancelled run ${id}: ${statusLine(run)}`);
      return { code: ExitCode.passed, run };
    } catch (error) {
      // A finished run cannot be cancelled: nothing left to do, which is what was asked.
      if (error instanceof ApiError && error.status === 409 && error.code === "run_finished") {
        this.say(`Run ${id} had already finished: ${error.message}`);
        return { code: ExitCode.passed };
      }
      throw error;
    }
  }

  private async status(id: string, json: string | undefined): Promise<Result> {
    const run = await this.read((o) => this.client.getRun(id, undefined, o));
    this.run = run;
    this.say(`Run ${run.id} "${run.name}": ${run.url}`);
    this.say(statusLine(run));
    for (const test of run.tests) {
      this.say(testLine(test));
      const screenshot = test.status === "FAILED" ? screenshotLine(test) : undefined;
      if (screenshot) this.say(screenshot);
    }
    for (const line of quarantineLines(run)) this.say(line);
    if (json) writeReports(run, { json }, { ...this.io, stdout: this.io.json });
    return { code: ExitCode.passed, run };
  }

  private async list(command: Extract<Command, { name: "list" }>): Promise<Result> {
    const { client } = this;
    let rows: string[][];
    let data: unknown;
    let note = "";
    switch (command.what) {
      case "plans": {
        const plans = await this.read((o) => client.listTestPlans(o));
        data = { testPlans: plans };
        rows = plans.map((p) => [p.id, p.name, `${p.testCaseCount} test cases`, p.description]);
        break;
      }
      case "envs": {
        const environments = await this.read((o) => client.listEnvironments(o));
        data = { environments };
        rows = environments.map((e) => [e.id, e.name, e.baseUrl, e.isDefault ? "default" : ""]);
        break;
      }
      case "cases": {
        const answer = await this.read((o) =>
          client.listTestCases({ tags: command.tags, ...(command.search && { search: command.search }) }, o),
        );
        data = answer;
        rows = answer.testCases.map((c) => [c.id, c.name, c.tags.join(","), c.enabled ? "" : "disabled"]);
        if (answer.truncated) note = "(only the oldest 500 are listed: narrow with --tag or --search)";
        break;
      }
      case "runs": {
        const runs = await this.read((o) => client.listRuns(command.limit, o));
        data = { runs };
        rows = runs.map((r) => [r.id, r.status, r.createdAt, r.name, r.url]);
        break;
      }
    }
    if (command.json) {
      const text = `${JSON.stringify(data, null, 2)}\n`;
      if (command.json === "-") this.io.json.write(text);
      else writeJsonFile(command.json, text);
    }
    if (command.json !== "-") {
      for (const line of table(rows)) this.say(line);
      if (note) this.say(note);
    }
    return { code: ExitCode.passed };
  }
}

function writeJsonFile(file: string, text: string) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** Rows as aligned columns (the last column is not padded). */
function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}
