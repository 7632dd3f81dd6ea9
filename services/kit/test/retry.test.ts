// The service client's one repeat of a call safe to repeat, against a real server on a real socket
// whose first answers are UNAVAILABLE (as a call meeting a replica that is going away gets).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  BillingService,
  ChargeRunResponseSchema,
  GetBalanceResponseSchema,
} from "@testrun/gen/testrun/billing/v1/billing_pb";
import { testTokens } from "@testrun/testing";
import { expect } from "chai";
import { pino } from "pino";
import { serviceClient } from "../src/rpc/client.js";
import { bind, type RpcServer, startRpcServer } from "../src/rpc/server.js";

describe("service client repeats", () => {
  const tokens = testTokens();
  let server: RpcServer;
  const calls = { getBalance: 0, chargeRun: 0 };
  /** How many calls of each method answer UNAVAILABLE before one succeeds. */
  let unavailableFirst = 0;
  const unavailableOr = <T>(count: number, answer: T) => {
    if (count <= unavailableFirst) throw new ConnectError("going away", Code.Unavailable);
    return answer;
  };

  before(async () => {
    server = await startRpcServer({
      services: [
        bind(BillingService, {
          getBalance: () =>
            unavailableOr(++calls.getBalance, create(GetBalanceResponseSchema, { balance: 7n })),
          chargeRun: () => unavailableOr(++calls.chargeRun, create(ChargeRunResponseSchema, {})),
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
    calls.getBalance = 0;
    calls.chargeRun = 0;
  });

  const client = () =>
    serviceClient(BillingService, `http://127.0.0.1:${server.port}`, { token: tokens.SERVICE_TOKEN });

  it("repeats a read (NO_SIDE_EFFECTS) once after UNAVAILABLE, and succeeds", async () => {
    unavailableFirst = 1;
    const { balance } = await client().getBalance({ projectId: "prj_1" });
    expect(balance).to.equal(7n);
    expect(calls.getBalance).to.equal(2);
  });

  it("repeats only once: a second UNAVAILABLE reaches the caller", async () => {
    unavailableFirst = 2;
    const error = await client()
      .getBalance({ projectId: "prj_1" })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(error?.code).to.equal(Code.Unavailable);
    expect(calls.getBalance).to.equal(2);
  });

  it("never repeats a call with effects (ChargeRun)", async () => {
    unavailableFirst = 1;
    const error = await client()
      .chargeRun({ projectId: "prj_1", runId: "run_1", amount: 1n })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(error?.code).to.equal(Code.Unavailable);
    expect(calls.chargeRun).to.equal(1);
  });
});
