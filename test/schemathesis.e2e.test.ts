// schemathesis (scripts/schemathesis-run.ts) against the live gateway of a whole system of its own,
// as one of the test files: from the document the gateway serves, with every default check, the
// demo project's key and a fixed seed. Any finding fails, with everything schemathesis printed.
import { expect } from "chai";
import { runSchemathesis, schemathesisLimits } from "../scripts/schemathesis-run.js";
import type { System } from "../scripts/system.js";
import { startTestSystem } from "./pipeline.js";

describe("schemathesis against the live gateway (its OpenAPI document, every default check)", function () {
  // 50 examples per operation and phase: some 30 s on a quiet machine.
  this.timeout(600_000);
  let system: System;

  before(async () => {
    system = await startTestSystem({ extraEnv: schemathesisLimits });
  });
  after(async () => {
    await system?.stop();
  });

  it("finds nothing with its default checks", async () => {
    const printed: string[] = [];
    const code = await runSchemathesis(system, [], (line) => printed.push(line));
    expect(code, printed.join("\n")).to.equal(0);
  });
});
