// The console's name for a run of chosen test cases (docs/console.md, "Starting a run").
import { expect } from "chai";
import { chosenCasesRunName } from "../src/rpc/run-handlers.js";

describe("console run name for chosen test cases", () => {
  it("is the first case's name, with how many more", () => {
    expect(chosenCasesRunName(["Login"])).to.equal("Login");
    expect(chosenCasesRunName(["Login", "Checkout", "Refund"])).to.equal("Login + 2 more");
  });

  it("cuts the first name, never the count, to fit a run name's 200 characters", () => {
    const long = "é".repeat(200);
    const name = chosenCasesRunName([long, ...Array<string>(499).fill("x")]);
    expect([...name]).to.have.length(200);
    expect(name).to.match(/^é+… \+ 499 more$/);
    expect(chosenCasesRunName([long])).to.equal(long);
  });
});
