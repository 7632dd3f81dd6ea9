// Every service refuses text holding NUL up front (PostgreSQL text cannot hold it), over a real
// server on a real socket, for unary and streaming calls alike, sparing the fields declared exempt.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { BillingService, GetBalanceResponseSchema } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { RunsService, WatchRunResponseSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { testTokens } from "@testrun/testing";
import { expect } from "chai";
import { pino } from "pino";
import { serviceClient } from "../src/rpc/client.js";
import { nulTextMessage } from "../src/rpc/nul-text.js";
import { bind, type RpcServer, startRpcServer } from "../src/rpc/server.js";

describe("text holding NUL", () => {
  const tokens = testTokens();
  let server: RpcServer;
  const reached: string[] = [];

  before(async () => {
    server = await startRpcServer({
      services: [
        bind(
          BillingService,
          {
            getBalance: (req) => {
              reached.push(req.projectId);
              return create(GetBalanceResponseSchema, { balance: 1n });
            },
          },
          [],
          ["testrun.billing.v1.GetBalanceRequest.projectId"],
        ),
        bind(RunsService, {
          async *watchRun(req) {
            reached.push(req.runId);
            yield create(WatchRunResponseSchema, {});
          },
        }),
      ],
      host: "127.0.0.1",
      port: 0,
      tokens: { service: tokens.SERVICE_TOKEN },
      logger: pino({ level: "silent" }),
    });
  });
  after(() => server?.shutdown(1_000));
  beforeEach(() => {
    reached.length = 0;
  });

  const client = <S extends typeof BillingService | typeof RunsService>(desc: S) =>
    serviceClient(desc, `http://127.0.0.1:${server.port}`, { token: tokens.SERVICE_TOKEN });

  async function refusal(call: () => Promise<unknown>): Promise<ConnectError> {
    try {
      await call();
    } catch (error) {
      return ConnectError.from(error);
    }
    throw new Error("expected a refusal, but the call succeeded");
  }

  it("refuses a streaming request with NUL in a nested message's text before the handler runs", async () => {
    const runs = client(RunsService);
    const error = await refusal(async () => {
      for await (const _ of runs.watchRun({
        projectId: "prj_1",
        runId: "run_1",
        actor: { kind: { case: "memberId", value: "mem_\u0000" } },
      }));
    });
    expect(error.code).to.equal(Code.InvalidArgument);
    expect(error.rawMessage).to.equal(nulTextMessage);
    expect(reached).to.deep.equal([]);
  });

  it("lets the same streaming request through without NUL", async () => {
    const runs = client(RunsService);
    for await (const _ of runs.watchRun({ projectId: "prj_1", runId: "run_\u0001" }));
    expect(reached).to.deep.equal(["run_\u0001"]);
  });

  it("lets NUL through in a field declared exempt, and nowhere else", async () => {
    const billing = client(BillingService);
    await billing.getBalance({ projectId: "prj_\u0000" });
    expect(reached).to.deep.equal(["prj_\u0000"]);
    const error = await refusal(() =>
      billing.getBalance({ projectId: "prj_1", actor: { kind: { case: "memberId", value: "\u0000" } } }),
    );
    expect(error.code).to.equal(Code.InvalidArgument);
  });
});
