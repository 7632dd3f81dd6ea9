// What the executor reads back of a spec's folder (src/playwright/workspace.ts's readOutput): the
// runner's report was written by a process that ran the spec, so it is read only up to its bound
// (16 MiB, run-spec.ts), never past it.
import { writeFile } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { PlaywrightFileSchema, PlaywrightSpecSchema } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import { expect } from "chai";
import { runSpec } from "../src/playwright/run-spec.js";
import { layOutSpec, OutputTooLarge, readOutput, type SpecWorkspace } from "../src/playwright/workspace.js";
import { chromiumPath } from "./browser-target.js";

const reportBound = 16 * 1024 ** 2;
const specOf = (source: string) =>
  create(PlaywrightSpecSchema, { spec: create(PlaywrightFileSchema, { path: "tests/app.spec.ts", source }) });
const base = { baseUrl: "http://127.0.0.1:9", chromiumPath };

describe("the spec's report, read back by the executor", function () {
  this.timeout(60_000);
  let workspace: SpecWorkspace;
  beforeEach(async () => {
    workspace = await layOutSpec(specOf(`import { test } from "@playwright/test";`), {
      ...base,
      deadlineMs: 1000,
      chromiumArgs: [],
      recordTrace: false,
    });
  });
  afterEach(async () => {
    await workspace.dispose();
  });

  it("reads a report of 16 MiB and refuses one a byte larger, without reading it", async () => {
    await writeFile(workspace.reportPath, Buffer.alloc(reportBound, 32));
    expect((await readOutput(workspace, workspace.reportPath, reportBound)).length).to.equal(reportBound);
    await writeFile(workspace.reportPath, Buffer.alloc(reportBound + 1, 32));
    const refused = await readOutput(workspace, workspace.reportPath, reportBound).catch((error) => error);
    expect(refused).to.be.instanceOf(OutputTooLarge);
    expect(refused.message).to.equal(`report.json is larger than ${reportBound} bytes`);
  });

  it("fails a spec whose report the runner wrote past 16 MiB, taking no step from it", async () => {
    // The JSON reporter keeps what a test printed: 17 MiB of it make a report past the bound.
    const outcome = await runSpec(
      specOf(`import { test } from "@playwright/test";
test("prints 17 MiB", async () => {
  for (let i = 0; i < 17; i++) console.log("x".repeat(1024 * 1024));
});
`),
      { ...base, variables: {}, deadlineMs: 30_000, chromiumArgs: ["--no-sandbox"], traceMaxBytes: 1024 },
    );
    expect(outcome.passed).to.equal(false);
    expect(outcome.steps).to.deep.equal([]);
    // Its own doing, said as such: not the system's failure, which would be run again.
    expect(outcome).to.include({
      cause: "assertion",
      summary:
        "the spec's report is larger than 16 MiB, the most read: its tests printed too much (what a test prints is kept in the report)",
    });
  });
});
