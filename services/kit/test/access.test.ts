// requireAccess: the one way services ask the catalog about an actor's rights, against a real
// server on a real socket whose CheckAccess answers as each test sets it.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  CatalogService,
  type CheckAccessResponse,
  CheckAccessResponseSchema,
  Permission,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { testTokens } from "@testrun/testing";
import { expect } from "chai";
import { pino } from "pino";
import { requireAccess } from "../src/access.js";
import { serviceClient } from "../src/rpc/client.js";
import { bind, type RpcServer, startRpcServer } from "../src/rpc/server.js";

describe("requireAccess", () => {
  const tokens = testTokens();
  let server: RpcServer;
  /** What the catalog's CheckAccess does next: answer, or throw. */
  let answer: () => CheckAccessResponse = () => create(CheckAccessResponseSchema);

  before(async () => {
    server = await startRpcServer({
      services: [bind(CatalogService, { checkAccess: () => answer() })],
      host: "127.0.0.1",
      port: 0,
      tokens: { service: tokens.SERVICE_TOKEN },
      logger: pino({ level: "silent" }),
    });
  });
  after(() => server?.shutdown(1_000));

  const catalog = (token = tokens.SERVICE_TOKEN) =>
    serviceClient(CatalogService, `http://127.0.0.1:${server.port}`, { token });
  const actor = create(ActorSchema, { kind: { case: "memberId", value: "mem_1" } });
  const check = (client = catalog()) => requireAccess(client, actor, "prj_1", Permission.READ);
  const refusal = async (promise: Promise<unknown>): Promise<ConnectError> => {
    const error = await promise.then(
      () => expect.fail("access was granted"),
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConnectError);
    return error as ConnectError;
  };
  const throwing = (message: string, code: Code) => () => {
    throw new ConnectError(message, code);
  };

  it("returns the catalog's answer", async () => {
    answer = () => create(CheckAccessResponseSchema, { organizationId: "org_1" });
    expect((await check()).organizationId).to.equal("org_1");
  });

  for (const code of [Code.NotFound, Code.PermissionDenied, Code.InvalidArgument]) {
    it(`passes on ${Code[code]} with the catalog's message`, async () => {
      answer = throwing("project prj_1 not visible", code);
      const error = await refusal(check());
      expect(error.code).to.equal(code);
      expect(error.rawMessage).to.equal("project prj_1 not visible");
    });
  }

  for (const code of [Code.Unavailable, Code.DeadlineExceeded]) {
    it(`answers UNAVAILABLE, without the catalog's words, for ${Code[code]}`, async () => {
      answer = throwing("pool exhausted on db-3", code);
      const error = await refusal(check());
      expect(error.code).to.equal(Code.Unavailable);
      expect(error.rawMessage).to.equal("the catalog service is unavailable");
    });
  }

  it("answers UNAVAILABLE when the catalog cannot be reached", async () => {
    const unreachable = serviceClient(CatalogService, "http://127.0.0.1:1", { token: tokens.SERVICE_TOKEN });
    const error = await refusal(check(unreachable));
    expect(error.code).to.equal(Code.Unavailable);
    expect(error.rawMessage).to.equal("the catalog service is unavailable");
  });

  it("answers INTERNAL, without the catalog's words, for any other failure", async () => {
    answer = throwing("relation catalog.projects does not exist", Code.Internal);
    const internal = await refusal(check());
    expect(internal.code).to.equal(Code.Internal);
    expect(internal.rawMessage).to.equal("could not check access with the catalog service");
    // Our own token refused is our fault, not the caller's.
    answer = () => create(CheckAccessResponseSchema);
    const refused = await refusal(check(catalog("not-the-token")));
    expect(refused.code).to.equal(Code.Internal);
    expect(refused.rawMessage).to.equal("could not check access with the catalog service");
  });
});
