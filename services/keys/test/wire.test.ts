import { randomBytes } from "node:crypto";
import { status } from "@grpc/grpc-js";
import {
  componentRedisUrl,
  createMigratedTestDatabase,
  type ServiceProcess,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { bearerMetadata, callGrpcJs, grpcJsClient } from "@testrun/testing/grpc-js";
import { expect } from "chai";

// What crosses processes (docs/development.md, "Tests"): the keys service as a real process,
// started as in production, called over a real socket by a grpc-js client built from proto/.
// Everything else of the service is tested in-process (keys.test.ts).
describe("keys service over real gRPC", () => {
  const tokens = testTokens();
  let keys: ServiceProcess;

  before(async () => {
    const env: Record<string, string> = {
      ...tokens,
      DATABASE_URL: await createMigratedTestDatabase(["keys"]),
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "keys"),
      // VerifyKey never asks the catalog.
      CATALOG_URL: "http://127.0.0.1:1",
    };
    keys = await startServiceProcess("keys", env);
  });
  after(async () => {
    await keys?.stop("SIGTERM");
  });

  it("refuses the executor's token and calls without a token", async () => {
    const client = grpcJsClient(
      "testrun/keys/v1/keys.proto",
      "testrun.keys.v1.KeysService",
      `127.0.0.1:${keys.port}`,
    );
    const secret = `trk_${randomBytes(20).toString("hex")}`;
    try {
      const executor = await callGrpcJs(
        client,
        "VerifyKey",
        { secret },
        bearerMetadata(tokens.EXECUTOR_TOKEN),
      );
      expect(executor.error?.code).to.equal(status.PERMISSION_DENIED);
      const anonymous = await callGrpcJs(client, "VerifyKey", { secret });
      expect(anonymous.error?.code).to.equal(status.UNAUTHENTICATED);
      // The service token is answered, over the same wire: a secret never issued is UNKNOWN.
      const served = await callGrpcJs(client, "VerifyKey", { secret }, bearerMetadata(tokens.SERVICE_TOKEN));
      expect(served.error).to.equal(null);
      expect(served.response).to.include({ result: "VERIFY_KEY_RESULT_UNKNOWN" });
    } finally {
      client.close();
    }
  });
});
