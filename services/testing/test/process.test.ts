// An unexpected exit of a service process the tests started is written to the tests' stderr with
// what traces it: a service of the shared system that died during one suite once failed the next
// suites with ECONNREFUSED and nothing said why.
import { once } from "node:events";
import { expect } from "chai";
import { type LaunchCommand, type ServiceProcess, startServiceProcess } from "../src/process.js";

/**
 * A stand-in service: says it listens as a service does, and on SIGUSR2 writes `crashLines` lines
 * to stderr and exits 3, as a crash would.
 */
const standIn = (crashLines: number): LaunchCommand => ({
  file: process.execPath,
  args: [
    "--eval",
    // The handler first: the test signals as soon as it reads "listening", and a SIGUSR2 before
    // the handler would kill the stand-in by signal instead of its exit code 3.
    `process.on("SIGUSR2", () => {
       for (let i = 1; i <= ${crashLines}; i++) console.error("crash line " + i);
       process.exit(3);
     });
     console.log(JSON.stringify({ msg: "listening", port: 4321 }));
     console.log(JSON.stringify({ msg: "a log line before the crash" }));
     setInterval(() => {}, 1000);`,
  ],
  cwd: process.cwd(),
});

/** What this process writes to stderr while `action` runs (and until `settled` resolves). */
async function stderrDuring(action: () => Promise<unknown>): Promise<string> {
  const written: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await action();
  } finally {
    process.stderr.write = write;
  }
  return written.join("");
}

describe("startServiceProcess: an exit nothing asked for", () => {
  const started: ServiceProcess[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((child) => child.stop("SIGKILL")));
  });
  const start = async (crashLines: number, options: { owner?: string; reportExit?: boolean } = {}) => {
    const child = await startServiceProcess("catalog", {}, { launch: standIn(crashLines), ...options });
    started.push(child);
    return child;
  };

  it("is reported on stderr with the service, its owner, pid, port, exit code and last 20 stderr lines", async () => {
    const child = await start(25, { owner: "the shared system of test process 1" });
    const report = await stderrDuring(async () => {
      const closed = once(child.process, "close");
      child.process.kill("SIGUSR2");
      await closed;
    });
    expect(report).to.contain(
      `catalog of the shared system of test process 1 (pid ${child.process.pid}, port 4321) exited with code 3`,
    );
    expect(report).to.contain("ECONNREFUSED");
    expect(report).to.contain("its last 20 lines on stderr");
    // The last 20 of 25, in order; the first five are gone.
    expect(report).to.contain(Array.from({ length: 20 }, (_, i) => `  | crash line ${i + 6}\n`).join(""));
    expect(report).not.to.contain("crash line 5\n");
    expect(report).to.contain('  | {"msg":"a log line before the crash"}');
  });

  it("says which signal killed it when it wrote nothing on stderr", async () => {
    const child = await start(0);
    const report = await stderrDuring(async () => {
      const closed = once(child.process, "close");
      child.process.kill("SIGKILL");
      await closed;
    });
    expect(report).to.contain(`catalog (pid ${child.process.pid}, port 4321) killed by SIGKILL`);
    expect(report).to.contain("nothing on stderr");
  });

  it("is not reported when stop() ended it, nor when asked not to", async () => {
    const stopped = await start(0);
    const quiet = await start(3, { reportExit: false });
    const report = await stderrDuring(async () => {
      expect(await stopped.stop("SIGTERM")).to.equal(null);
      const closed = once(quiet.process, "close");
      quiet.process.kill("SIGUSR2");
      expect((await closed)[0]).to.equal(3);
    });
    expect(report).to.equal("");
  });
});
