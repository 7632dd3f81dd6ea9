// The GitHub Action (action.yml at the repository root): `testrun run` with the step's inputs.
// The runner passes inputs as INPUT_<NAME> variables and reads outputs from the file named by
// GITHUB_OUTPUT; the CLI appends its summary to GITHUB_STEP_SUMMARY itself. Formats as GitHub
// documents them ("Workflow commands for GitHub Actions"); docs/pipelines.md shows a workflow.
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { type Io, main } from "./cli.js";
import { ExitCode } from "./outcome.js";
import type { Output } from "./progress.js";

/** An input as the runner passes it: INPUT_ and the name in upper case, spaces as underscores. */
export const input = (env: Io["env"], name: string) =>
  (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();

/** The data of a workflow command (`::error::…`), escaped as the runner unescapes it. */
const escapeData = (text: string) => text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");

/** Appends `name` to the GITHUB_OUTPUT file in its multi-line form, safe for any value. */
export function setOutput(file: string, name: string, value: string): void {
  const delimiter = `ghadelimiter_${randomUUID()}`;
  appendFileSync(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
}

class InputError extends Error {}

const booleanInput = (env: Io["env"], name: string): boolean => {
  const value = input(env, name);
  if (["", "false", "False", "FALSE"].includes(value)) return false;
  if (["true", "True", "TRUE"].includes(value)) return true;
  throw new InputError(`input ${name} must be true or false, not "${value}"`);
};

/** The `testrun run` command line of the step's inputs. */
export function argvOf(env: Io["env"]): string[] {
  const argv = ["run"];
  const option = (inputName: string, flag = inputName) => {
    const value = input(env, inputName);
    if (value) argv.push(`--${flag}`, value);
  };
  option("plan");
  option("tags");
  option("cases");
  option("env");
  option("name");
  option("junit");
  option("json");
  option("artifacts");
  if (input(env, "wait") && !booleanInput(env, "wait")) {
    argv.push("--no-wait");
    return argv;
  }
  option("timeout");
  if (booleanInput(env, "cancel-on-timeout")) argv.push("--cancel-on-timeout");
  if (booleanInput(env, "allow-skipped")) argv.push("--allow-skipped");
  if (booleanInput(env, "fail-on-flaky")) argv.push("--fail-on-flaky");
  option("fail-on");
  return argv;
}

/** Runs the action in this environment; resolves with the exit code. */
export async function runAction(io: Io): Promise<number> {
  const { env } = io;
  const apiKey = input(env, "api-key") || env.TESTRUN_API_KEY || "";
  // Keeps the key out of the log even if something printed it.
  if (apiKey) io.stdout.write(`::add-mask::${apiKey}\n`);
  let argv: string[];
  try {
    argv = argvOf(env);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    io.stdout.write(`::error title=Testrun::${escapeData(error.message)}\n`);
    return ExitCode.usage;
  }
  const errors: string[] = [];
  const stderr: Output = {
    write: (text) => {
      errors.push(text);
      io.stderr.write(text);
    },
  };
  const result = await main(argv, {
    ...io,
    stderr,
    env: { ...env, TESTRUN_URL: input(env, "api-url") || env.TESTRUN_URL, TESTRUN_API_KEY: apiKey },
  });
  const { run } = result;
  if (env.GITHUB_OUTPUT) {
    setOutput(env.GITHUB_OUTPUT, "run-id", run?.id ?? "");
    setOutput(env.GITHUB_OUTPUT, "url", run?.url ?? "");
    setOutput(env.GITHUB_OUTPUT, "status", run?.status ?? "");
  }
  if (result.code !== ExitCode.passed) {
    const what = run
      ? `Run ${run.name} ${run.status}: ${run.passedTests} passed, ${run.failedTests} failed of ${run.totalTests} (exit code ${result.code}) ${run.url}`
      : `exit code ${result.code}`;
    const detail = errors.join("").trim();
    io.stdout.write(`::error title=Testrun::${escapeData(detail ? `${what}\n${detail}` : what)}\n`);
  }
  return result.code;
}
