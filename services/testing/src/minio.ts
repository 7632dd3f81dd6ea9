/**
 * A throwaway MinIO, a real S3-compatible object store, for the tests of the runs service's S3
 * artifact store. The binary is built by `make minio` from the Go module proxy at the Makefile's
 * MINIO_VERSION into a cache outside the clone (shared by every clone and worktree). Started at
 * most once per test process, when a test first asks for it (`sharedMinio`), on free ports with a
 * throwaway directory; stopped by its pid (`stopSharedMinio`, from the mocha global teardown).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, testrunCache } from "./process.js";
import { findFreePort } from "./servers.js";

export interface ThrowawayS3 {
  /** The S3 endpoint (path-style addressing). */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The server's process id. */
  pid: number;
  stop(): Promise<void>;
}

/** Where `make minio` puts the binary of the Makefile's MINIO_VERSION (TESTRUN_MINIO_BIN overrides it). */
export function minioBinary(): string {
  if (process.env.TESTRUN_MINIO_BIN) return process.env.TESTRUN_MINIO_BIN;
  const makefile = readFileSync(join(repoRoot, "Makefile"), "utf8");
  const version = /^MINIO_VERSION := (\S+)$/m.exec(makefile)?.[1];
  if (!version) throw new Error("the Makefile names no MINIO_VERSION");
  return testrunCache("minio", version, "minio");
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function live(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/minio/health/live`, { signal: AbortSignal.timeout(1_000) });
    return response.ok;
  } catch {
    return false;
  }
}

/** Starts MinIO on free ports of 127.0.0.1 with a fresh directory; stop() kills it by pid and removes the directory. */
export async function startThrowawayMinio(): Promise<ThrowawayS3> {
  const binary = minioBinary();
  if (!existsSync(binary))
    throw new Error(`${binary} is missing: run \`make minio\` (it builds MinIO with Go)`);
  const dir = await mkdtemp(join(tmpdir(), "testrun-minio-"));
  const log = join(dir, "minio.log");
  const [port, consolePort] = [await findFreePort(), await findFreePort()];
  const credentials = {
    accessKeyId: `test${randomBytes(6).toString("hex")}`,
    secretAccessKey: randomBytes(24).toString("base64url"),
  };
  const out = openSync(log, "a");
  const child = spawn(
    binary,
    [
      "server",
      join(dir, "data"),
      "--address",
      `127.0.0.1:${port}`,
      "--console-address",
      `127.0.0.1:${consolePort}`,
      "--quiet",
    ],
    {
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        MINIO_ROOT_USER: credentials.accessKeyId,
        MINIO_ROOT_PASSWORD: credentials.secretAccessKey,
        MINIO_BROWSER: "off",
        MINIO_UPDATE: "off",
      },
      stdio: ["ignore", out, out],
      detached: true,
    },
  );
  child.unref();
  const pid = child.pid;
  if (!pid) throw new Error(`${binary} could not be started`);
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const stop = async () => {
    if (!exited) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {}
      const deadline = Date.now() + 10_000;
      while (!exited && Date.now() < deadline) await tick(20);
      if (!exited)
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
    }
    await rm(dir, { recursive: true, force: true });
  };
  // Killed if the test process exits without stopping it.
  const onExit = () => {
    try {
      if (!exited) process.kill(pid, "SIGKILL");
    } catch {}
  };
  process.once("exit", onExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (!(await live(endpoint))) {
    if (exited || Date.now() > deadline) {
      const tail = (await readFile(log, "utf8").catch(() => "")).split("\n").slice(-30).join("\n");
      await stop();
      throw new Error(`minio on port ${port} did not come up\n--- ${log} ---\n${tail}`);
    }
    await tick(50);
  }
  return {
    endpoint,
    region: "us-east-1",
    ...credentials,
    pid,
    async stop() {
      process.off("exit", onExit);
      await stop();
    },
  };
}

let shared: Promise<ThrowawayS3> | undefined;

/** The test process's MinIO, started on first use. */
export function sharedMinio(): Promise<ThrowawayS3> {
  shared ??= startThrowawayMinio();
  return shared;
}

/** Stops the test process's MinIO if one was started (mocha global teardown). */
export async function stopSharedMinio(): Promise<void> {
  if (!shared) return;
  const started = shared;
  shared = undefined;
  await (await started.catch(() => undefined))?.stop();
}
