// Bounded work per test: a step reads at most a capped part of a response (streamed, the rest not
// read and the connection closed), and a test has an overall deadline besides its steps' timeouts.
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { stepsFromFile } from "@testrun/content-file";
import { expect } from "chai";
import { readBody } from "../src/steps/http.js";
import { runSteps } from "../src/steps/runner.js";
import { localEgress } from "./target.js";

const MiB = 1024 * 1024;
/** `[{},{},…,{}]` of about `bytes` bytes (exactly when 3n + 1), streamed as the client takes it. */
function writeEmptyObjects(res: ServerResponse, bytes: number): void {
  res.writeHead(200, { "content-type": "application/json" });
  const chunk = "{},".repeat((64 * 1024) / 4);
  const objects = Math.max(1, Math.floor((bytes - 1) / 3));
  function* body() {
    yield "[";
    for (let left = objects - 1; left > 0; left -= chunk.length / 3)
      yield chunk.slice(0, Math.min(left, chunk.length / 3) * 3);
    yield "{}]";
  }
  Readable.from(body()).pipe(res);
}

describe("bounded work per test", () => {
  let server: Server;
  let url: string;
  /** Per request: whether the server wrote the whole body before the connection closed. */
  let finished: Promise<boolean>[] = [];
  before(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      finished.push(new Promise((resolve) => res.once("close", () => resolve(res.writableFinished))));
      if (path === "/hang") return; // never answers
      const size = Number(/^\/big\/(\d+)$/.exec(path)?.[1] ?? 0);
      writeEmptyObjects(res, size);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    finished = [];
  });

  const run = (step: Record<string, unknown>, options: { maxBodyBytes?: number; deadlineMs?: number } = {}) =>
    runSteps(stepsFromFile([{ name: "s", ...step }], "steps"), {
      baseUrl: url,
      variables: {},
      egress: localEgress,
      ...options,
    });

  describe("response bodies", () => {
    it("keeps at most the cap of a 10 MiB [{},{},…] body, and closes the connection instead of reading on", async () => {
      const response = await fetch(`${url}/big/${10 * MiB}`);
      const read = await readBody(response, MiB);
      expect(read.truncated).to.equal(true);
      expect(read.retainedBytes).to.equal(MiB);
      expect(read.text.length).to.equal(MiB);
      expect(read.text.startsWith("[{},{},")).to.equal(true);
      // The server's response was cut off: the client did not drain the other 9 MiB.
      expect(await finished[0]).to.equal(false);
    });

    it("reads a body of exactly the cap whole", async () => {
      const read = await readBody(await fetch(`${url}/big/100`), 100);
      expect(read).to.include({ truncated: false, retainedBytes: 100 });
      expect(read.text.endsWith(",{}]")).to.equal(true);
    });

    it("passes a bodyContains found in the first MiB of a 10 MiB body", async () => {
      const outcome = await run({
        http: { method: "GET", path: `/big/${10 * MiB}` },
        expect: { bodyContains: ["{},{}"] },
      });
      expect(outcome, outcome.summary).to.include({ passed: true });
    });

    it("fails JSON checks and saves on a truncated body, saying only the first MiB was checked", async () => {
      const json = await run({
        http: { method: "GET", path: `/big/${10 * MiB}` },
        expect: { json: { "$[0]": {} } },
      });
      expect(json.summary).to.equal(
        'step 1 "s": expected $[0] = {}, but the response larger than 1 MiB; checked its first 1 MiB, and JSON needs the whole body',
      );
      const save = await run({ http: { method: "GET", path: `/big/${10 * MiB}` }, save: { first: "$[0]" } });
      expect(save.summary).to.equal(
        'step 1 "s": cannot save first: response larger than 1 MiB; checked its first 1 MiB, and JSON needs the whole body',
      );
    });

    it("says a text missing from or absence in a truncated body was checked on its beginning only", async () => {
      const contains = await run(
        { http: { method: "GET", path: "/big/8192" }, expect: { bodyContains: ["{}]"] } },
        { maxBodyBytes: 2048 },
      );
      expect(contains.summary).to.equal(
        'step 1 "s": expected the body to contain "{}]" (response larger than 2 KiB; checked its first 2 KiB)',
      );
      const absent = await run(
        { http: { method: "GET", path: "/big/8192" }, expect: { bodyNotContains: ["error"] } },
        { maxBodyBytes: 2048 },
      );
      expect(absent.summary).to.equal(
        'step 1 "s": cannot tell that the body does not contain "error": response larger than 2 KiB; checked its first 2 KiB',
      );
    });

    it("checks a body within the cap as before", async () => {
      const outcome = await run(
        {
          http: { method: "GET", path: "/big/1000" },
          expect: { json: { "$[0]": {} }, bodyNotContains: ["error"] },
        },
        { maxBodyBytes: 2048 },
      );
      expect(outcome, outcome.summary).to.include({ passed: true });
    });
  });

  describe("test deadline", () => {
    it("fails a test whose step outlives the test's deadline, naming the step and the deadline", async () => {
      const outcome = await run(
        { http: { method: "GET", path: "/hang", timeoutMs: 60_000 } },
        { deadlineMs: 300 },
      );
      expect(outcome).to.include({
        passed: false,
        failedStep: 1,
        summary: 'step 1 "s": the test ran past its deadline of 300 ms',
      });
    });

    it("still stops with the caller's reason when the test is aborted from outside", async () => {
      const controller = new AbortController();
      const running = runSteps(
        stepsFromFile([{ name: "s", http: { method: "GET", path: "/hang" } }], "steps"),
        {
          baseUrl: url,
          variables: {},
          signal: controller.signal,
          deadlineMs: 60_000,
          egress: localEgress,
        },
      );
      const reason = new Error("lease lost");
      controller.abort(reason);
      let thrown: unknown;
      await running.catch((error: unknown) => {
        thrown = error;
      });
      expect(thrown).to.equal(reason);
    });
  });
});
