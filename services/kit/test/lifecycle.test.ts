import { spawn } from "node:child_process";
import { once } from "node:events";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@testrun/gen/grpc/health/v1/health_pb";
import {
  repoRoot,
  type ServiceProcess,
  serviceCommand,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";

describe("a service process (kit lifecycle)", () => {
  const tokens = testTokens();
  let service: ServiceProcess;

  beforeEach(async () => {
    service = await startServiceProcess("executor", tokens);
  });
  afterEach(async () => {
    await service.stop("SIGKILL");
  });

  const health = () => createClient(Health, createGrpcTransport({ baseUrl: service.url }));

  it("answers grpc.health.v1 Check as SERVING without a service token", async () => {
    const res = await health().check({ service: "" });
    expect(res.status).to.equal(Status.SERVING);
  });

  it("answers NOT_FOUND for a health check of a service it does not serve", async () => {
    const error = await health()
      .check({ service: "no.such.Service" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).to.have.property("code", 5);
  });

  it("on SIGTERM, reports NOT_SERVING to watchers, then exits 0", async () => {
    const watch = health().watch({ service: "" })[Symbol.asyncIterator]();
    expect((await watch.next()).value?.status).to.equal(Status.SERVING);
    const exitCode = service.stop("SIGTERM");
    expect((await watch.next()).value?.status).to.equal(Status.NOT_SERVING);
    expect(await exitCode).to.equal(0);
    expect(service.output().some((line) => line.includes('"msg":"stopped"'))).to.equal(true);
  });
});

describe("a service process draining at shutdown (SHUTDOWN_DRAIN_MS)", () => {
  const tokens = testTokens();
  let service: ServiceProcess;

  before(async () => {
    // Long enough for the calls below to be answered inside the drain, even on a busy machine.
    service = await startServiceProcess("executor", { ...tokens, SHUTDOWN_DRAIN_MS: "3000" });
  });
  after(async () => {
    await service.stop("SIGKILL");
  });

  it("reports NOT_SERVING at once, still answers calls on new connections while draining, then exits 0", async () => {
    const health = () => createClient(Health, createGrpcTransport({ baseUrl: service.url }));
    const watch = health().watch({ service: "" })[Symbol.asyncIterator]();
    expect((await watch.next()).value?.status).to.equal(Status.SERVING);

    const exitCode = service.stop("SIGTERM");
    expect((await watch.next()).value?.status).to.equal(Status.NOT_SERVING);
    // A client that connects only now (a new HTTP/2 connection) is still served.
    expect((await health().check({ service: "" })).status).to.equal(Status.NOT_SERVING);
    const messages = () =>
      service.output().flatMap((line) => (line.startsWith("{") ? [JSON.parse(line).msg] : []));
    expect(messages(), "the drain was still on when that call was answered").not.to.include("closing");

    expect(await exitCode).to.equal(0);
    const order = messages().filter((msg) => ["shutting down", "closing", "stopped"].includes(String(msg)));
    expect(order).to.deep.equal(["shutting down", "closing", "stopped"]);
  });
});

describe("service configuration", () => {
  const startWith = async (env: Record<string, string>) => {
    const child = spawn(process.execPath, serviceCommand("executor"), {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const [code] = await once(child, "exit");
    return { code, stderr };
  };

  it("fails fast with every problem named and no value echoed", async () => {
    const { code, stderr } = await startWith({ EXECUTOR_TOKEN: "too-short-secret", PORT: "not-a-port" });
    expect(code).to.equal(1);
    expect(stderr).to.contain("EXECUTOR_TOKEN: must be at least 32 characters");
    expect(stderr).to.contain("PORT:");
    expect(stderr).not.to.contain("too-short-secret");
  });

  it("says which variable is missing", async () => {
    const { code, stderr } = await startWith({});
    expect(code).to.equal(1);
    expect(stderr).to.contain("EXECUTOR_TOKEN: is required");
    expect(stderr).to.contain("REDIS_URL: is required");
  });
});
