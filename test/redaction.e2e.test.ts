// A target that sends a secret variable back in every common encoding, run for real: the summaries
// the REST API returns (stored by the runs service), and the responses the failed steps kept (their
// http-response artifacts, downloaded over REST), hold none of those forms, nor any fragment of the
// value (docs/runs.md, "Test cases: the step format"; docs/security.md, "Redaction").

import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createCliContext, createEnvironment, setVariable } from "@testrun/cli";
import { echoes, fragments, secret, secretWindows } from "@testrun/testing/redaction-encodings";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { addCases, newProject, type Pipeline, sharedTestSystem } from "./pipeline.js";

const encodings = Object.entries(echoes);
/** A form a header can carry as it is: printable ASCII. */
const fitsAHeader = (text: string) => /^[\x20-\x7e]*$/.test(text);
/** What the target sends back for "cut": no form of the value, but most of it as it is. */
const cut = (value: string) => value.slice(0, 9).toUpperCase() + value.slice(9);

/**
 * GET /echo/N?v=V answers {"echoed": encoding N of V} and, when it fits, the header x-echoed;
 * GET /cut?v=V the same with `cut(V)`; GET /path/REST echoes REST as the request's URL has it
 * (the value percent-encoded by the executor's URL parser).
 */
function startEchoTarget() {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const value = url.searchParams.get("v") ?? "";
    const index = /^\/echo\/(\d+)$/.exec(url.pathname)?.[1];
    const encode = index === undefined ? undefined : encodings[Number(index)]?.[1];
    const echoed = url.pathname.startsWith("/path/")
      ? (req.url ?? "").slice("/path/".length)
      : url.pathname === "/cut"
        ? cut(value)
        : encode?.(value);
    if (echoed === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      "content-type": "application/json",
      ...(fitsAHeader(echoed) && { "x-echoed": echoed }),
    });
    res.end(JSON.stringify({ echoed }));
  });
  server.listen(0, "127.0.0.1");
  return server;
}

/** One test case of one step that fails on what the target echoes: its JSON body or its header. */
const echoCase = (name: string, path: string, where: "json" | "header") => ({
  name,
  tags: ["redaction"],
  steps: [
    {
      name: "echo",
      http: { method: "GET", path, ...(path.includes("{{") ? {} : { query: { v: "{{SECRET}}" } }) },
      expect: where === "json" ? { json: { "$.echoed": "nope" } } : { headers: { "x-echoed": "nope" } },
    },
  ],
});

describe("redaction of a secret a target sends back encoded, through the real gateway", function () {
  // A whole system to start, then some forty tests to run.
  this.timeout(90_000);
  let system: System;
  let pipeline: Pipeline;
  let target: ReturnType<typeof startEchoTarget> | undefined;
  let targetUrl = "";

  before(async () => {
    target = startEchoTarget();
    await once(target, "listening");
    system = await sharedTestSystem();
    const project = await newProject(system, "redaction", { credits: 200 });
    pipeline = project.pipeline;
    const ctx = createCliContext(system.env);
    const { port } = target.address() as AddressInfo;
    targetUrl = `http://127.0.0.1:${port}`;
    await createEnvironment(ctx, { projectId: project.projectId, name: "echo", baseUrl: targetUrl });
    await setVariable(ctx, { projectId: project.projectId, name: "SECRET", value: secret });
    const cases = encodings.flatMap(([name, encode], index) => [
      echoCase(`${name} in JSON`, `/echo/${index}`, "json"),
      ...(fitsAHeader(encode(secret)) ? [echoCase(`${name} in a header`, `/echo/${index}`, "header")] : []),
    ]);
    cases.push(
      echoCase("a URL path in JSON", "/path/{{SECRET}}", "json"),
      echoCase("a URL path in a header", "/path/{{SECRET}}", "header"),
      echoCase("cut and partly upper-cased", "/cut", "json"),
    );
    await addCases(system, project.projectId, JSON.stringify(cases));
  });
  after(async () => {
    target?.close();
  });

  it("stores summaries holding no encoded form of it and no 8 characters of it in a row", async () => {
    const run = await pipeline.finished(
      (await pipeline.start({ tags: ["redaction"], environment: "echo" })).id,
    );
    expect(run.tests.length).to.be.greaterThan(encodings.length);
    // Any 8 characters of any encoding that depend on the value: a form clipped in a summary counts.
    const leaks = [
      ...new Set([...encodings.flatMap(([, encode]) => secretWindows(encode)), ...fragments(secret)]),
    ];
    for (const test of run.tests) {
      expect(test.status, test.name).to.equal("FAILED");
      expect(test.summary, test.name).to.match(/got .*(\{\{SECRET\}\}|\[redacted\])/);
      for (const leak of leaks) expect(test.summary, test.name).not.to.include(leak);
    }
    // No form matched the cut value: the whole actual value was left out.
    const cutTest = run.tests.find((t) => t.name === "cut and partly upper-cased");
    expect(cutTest?.summary).to.equal('step 1 "echo": expected $.echoed = "nope", got [redacted]');

    // Each failed step kept the response it got: its bytes, as the REST API serves them, hold the
    // value only as {{SECRET}} (the header x-echoed is named, its value not kept).
    for (const test of run.tests) {
      const kept = test.artifacts.filter((a) => a.kind === "http_response");
      expect(
        kept.map((a) => [a.name, a.step, a.contentType]),
        test.name,
      ).to.deep.equal([["http-response", 1, "application/json"]]);
      const answer = await fetch(String(kept[0]?.url), {
        headers: { authorization: `Bearer ${pipeline.key}` },
      });
      expect(answer.status, test.name).to.equal(200);
      const text = await answer.text();
      for (const leak of leaks) expect(text, `${test.name}: ${leak}`).not.to.include(leak);
      const body = (JSON.parse(text) as { body: { text: string | null } }).body.text;
      if (test === cutTest) expect(body, test.name).to.equal(null);
      else expect(body, test.name).to.include("{{SECRET}}");
      const headers = (JSON.parse(text) as { headers: { name: string; value?: string }[] }).headers;
      for (const header of headers.filter((h) => h.name === "x-echoed"))
        expect(header, test.name).to.deep.equal({ name: "x-echoed" });
    }
    // Nothing the REST API answered held it either.
    for (const body of pipeline.responses)
      for (const fragment of fragments(secret)) expect(body).not.to.include(fragment);
  });

  it("leaves summaries readable with a one-letter value, replacing it only where it stands alone", async () => {
    const project = await newProject(system, "short value", { credits: 20 });
    const ctx = createCliContext(system.env);
    await createEnvironment(ctx, { projectId: project.projectId, name: "echo", baseUrl: targetUrl });
    await setVariable(ctx, { projectId: project.projectId, name: "S", value: "s" });
    const echo = { method: "GET", path: "/echo/0", query: { v: "s stands alone, inside steps it does not" } };
    await addCases(
      system,
      project.projectId,
      JSON.stringify([
        { name: "passes", tags: ["short"], steps: [{ name: "sign in", http: echo }] },
        {
          name: "fails",
          tags: ["short"],
          steps: [{ name: "echo", http: echo, expect: { json: { "$.echoed": "nope" } } }],
        },
      ]),
    );
    const run = await project.pipeline.finished(
      (await project.pipeline.start({ tags: ["short"], environment: "echo" })).id,
    );
    const summaries = Object.fromEntries(run.tests.map((test) => [test.name, test.summary]));
    expect(summaries).to.deep.equal({
      passes: "1 step passed",
      fails: 'step 1 "echo": expected $.echoed = "nope", got "{{S}} stands alone, inside steps it does not"',
    });
  });
});
