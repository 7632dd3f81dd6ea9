// A long-poll whose client never reads the answer (docs/security.md, "Resource limits"): its wait
// slot is the key's only one, and the answer is several MiB, more than the sockets' buffers take,
// so its write never completes. The slot is freed when the wait ends, not when the answer is read:
// the next wait of the key is served at once. Downstream services answer from the test.
import { connect, type Socket } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { KeysService, VerifyKeyResult } from "@testrun/gen/testrun/keys/v1/keys_pb";
import {
  RunSchema,
  RunStatus,
  RunsService,
  TestResultSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { bind, createLogger, type RpcServer, startRpcServer } from "@testrun/kit";
import {
  componentRedisUrl,
  eventually,
  type GatewayProcess,
  keyShapedSecret,
  startGateway,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import { call } from "./support.js";

describe("gateway long-poll of a client that never reads", function () {
  this.timeout(30_000);
  const tokens = testTokens();
  const secret = keyShapedSecret();
  const runId = "run_01m80000000000000000000001";
  // A finished run of 500 tests with long summaries: about 5 MiB of JSON.
  const run = create(RunSchema, {
    id: runId,
    name: "big",
    status: RunStatus.PASSED,
    finished: true,
    startedAt: timestampNow(),
    finishedAt: timestampNow(),
    url: `http://console.example/projects/prj_big/runs/${runId}`,
    tests: Array.from({ length: 500 }, (_, i) =>
      create(TestResultSchema, {
        id: `tr_${String(i).padStart(26, "0")}`,
        testCaseId: `tc_${String(i).padStart(26, "0")}`,
        name: `test ${i}`,
        status: TestStatus.PASSED,
        summary: "s".repeat(10_000),
      }),
    ),
  });
  let server: RpcServer;
  let gateway: GatewayProcess;
  let watches = 0;
  const sockets: Socket[] = [];

  before(async () => {
    server = await startRpcServer({
      host: "127.0.0.1",
      port: 0,
      tokens: { service: tokens.SERVICE_TOKEN },
      logger: createLogger("downstream", "silent"),
      services: [
        bind(KeysService, {
          verifyKey: () => ({
            result: VerifyKeyResult.VALID,
            keyId: "key_big",
            projectId: "prj_big",
            creatorMemberId: "mem_big",
            keyCreatedAt: timestampNow(),
          }),
          recordKeyUse: () => ({}),
        }),
        bind(RunsService, {
          async *watchRun() {
            watches++;
            yield { run };
          },
          getRun: () => ({ run }),
        }),
      ],
    });
    const url = `http://127.0.0.1:${server.port}`;
    gateway = await startGateway({
      ...tokens,
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "gateway"),
      KEYS_URL: url,
      CATALOG_URL: url,
      RUNS_URL: url,
      WAITS_PER_KEY: "1",
      RATE_LIMIT_PER_MINUTE: "1000",
    });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await gateway?.stop("SIGKILL");
    await server?.shutdown(1_000);
  });

  it("frees the key's wait slot when the wait ends, though the answer is never read", async () => {
    const { port, hostname } = new URL(gateway.http);
    const socket = connect(Number(port), hostname);
    sockets.push(socket);
    socket.pause();
    socket.write(
      `GET /v1/runs/${runId}?wait=5 HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${secret}\r\n\r\n`,
    );
    await eventually(async () => (watches === 1 ? true : undefined), "the non-reader's wait began");
    // The key's one slot is free again while the first answer still waits to be read.
    const next = await eventually(async () => {
      const answer = await call(gateway.http, `/v1/runs/${runId}?wait=5`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      return answer.status === 200 ? answer : undefined;
    }, "the key's next wait served");
    expect(next.body).to.include({ id: runId, finished: true });
    expect(socket.destroyed, "the non-reader's connection is still open").to.equal(false);
  });
});
