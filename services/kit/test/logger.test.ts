import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { repoRoot } from "@testrun/testing";
import { expect } from "chai";

describe("a service's last log lines at exit (kit logger, exitOnceLogged)", () => {
  it("reach a reader that falls behind whole and in order, and the process still exits 0", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", `${repoRoot}services/kit/test/fixtures/log-then-exit.ts`],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    // Nothing is read from stdout until the fixture is exiting: its pipe is full by then.
    await once(createInterface({ input: child.stderr }), "line");
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
    const [code] = await once(child, "close");

    expect(code).to.equal(0);
    const entries = lines.map((line) => JSON.parse(line) as { line: number; msg: string });
    expect(entries.map((entry) => entry.line)).to.deep.equal([...Array(501).keys()]);
    expect(entries.at(-1)?.msg).to.equal("stopped");
  });
});
