import { status } from "@grpc/grpc-js";
import { type CatalogProcess, startCatalogProcess } from "@testrun/testing";
import { bearerMetadata, callGrpcJs, grpcJsClient } from "@testrun/testing/grpc-js";
import { expect } from "chai";

// What crosses processes (docs/development.md, "Tests"): the catalog as a real process, started as
// in production, called over a real socket by a grpc-js client built from proto/. The catalog's
// other tests run it in-process (@testrun/testing).
describe("catalog over real gRPC", () => {
  let h: CatalogProcess;
  before(async () => {
    h = await startCatalogProcess();
  });
  after(async () => {
    await h?.stop();
  });

  it("serves the service token, refuses the executor's outside its methods and calls without a token", async () => {
    const client = grpcJsClient(
      "testrun/catalog/v1/catalog.proto",
      "testrun.catalog.v1.CatalogService",
      `127.0.0.1:${h.process.port}`,
    );
    const operator = { operator: { name: "wire test" } };
    try {
      const created = await callGrpcJs(
        client,
        "CreateOrganization",
        { actor: operator, name: "Wire" },
        bearerMetadata(String(h.env.SERVICE_TOKEN)),
      );
      expect(created.error).to.equal(null);
      const organizationId = (created.response as { organization: { id: string } }).organization.id;
      expect(organizationId).to.match(/^org_/);
      // A bad request is INVALID_ARGUMENT over the wire too, naming the field.
      const bad = await callGrpcJs(
        client,
        "CreateOrganization",
        { actor: operator, name: "" },
        bearerMetadata(String(h.env.SERVICE_TOKEN)),
      );
      expect(bad.error?.code).to.equal(status.INVALID_ARGUMENT);
      expect(bad.error?.details).to.contain("name");
      const executor = await callGrpcJs(
        client,
        "GetOrganization",
        { actor: operator, organizationId },
        bearerMetadata(String(h.env.EXECUTOR_TOKEN)),
      );
      expect(executor.error?.code).to.equal(status.PERMISSION_DENIED);
      const anonymous = await callGrpcJs(client, "GetOrganization", { actor: operator, organizationId });
      expect(anonymous.error?.code).to.equal(status.UNAUTHENTICATED);
    } finally {
      client.close();
    }
  });
});
