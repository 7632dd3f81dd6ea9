import { relative, resolve } from "node:path";
import { expect } from "chai";
import { circles, importGraph } from "../scripts/import-graph.js";

// Every import runs one way (docs/architecture.md, "Where things live"): a circle between modules
// or packages means neither can be read, tested or moved without the other. The graph is read
// from the sources as they are (scripts/import-graph.ts), type-only imports included.
describe("the workspace's import graph", () => {
  const root = resolve(import.meta.dirname, "..");
  const graph = importGraph(root);

  it("reads every package's modules and the imports between them", () => {
    // A guard on the reader itself: an empty graph has no circle either.
    expect(graph.packages).to.include.keys("@testrun/gateway", "@testrun/runs", "@testrun/console");
    expect(graph.packages.get("@testrun/gateway")).to.include("@testrun/kit");
    expect(graph.modules.size).to.be.above(300);
  });

  it("has no circle between modules", () => {
    const found = circles(graph.modules).map((circle) =>
      circle.map((file) => relative(root, file)).join(" <-> "),
    );
    expect(found).to.deep.equal([]);
  });

  it("has no circle between packages, and no server package imports the command-line client", () => {
    expect(circles(graph.packages)).to.deep.equal([]);
    const importers = [...graph.packages].filter(([, imports]) => imports.has("@testrun/testrun-cli"));
    expect(importers.map(([name]) => name)).to.deep.equal([]);
  });

  it("has no package importing the tests' harnesses (@testrun/testing), which the image leaves out", () => {
    // A guard: the harnesses' package is read, and imports the kit.
    expect(graph.packages.get("@testrun/testing")).to.include("@testrun/kit");
    const importers = [...graph.packages].filter(
      ([name, imports]) => name !== "@testrun/testing" && imports.has("@testrun/testing"),
    );
    expect(importers.map(([name]) => name)).to.deep.equal([]);
  });
});
