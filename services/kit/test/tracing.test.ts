import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { newId } from "@testrun/kit";
import {
  componentRedisUrl,
  createMigratedTestDatabase,
  keyShapedSecret,
  startGateway,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  service: string;
}

/** A real OTLP/HTTP endpoint that keeps every span it is sent. */
async function startCollector() {
  const spans: ExportedSpan[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const payload = JSON.parse(body) as {
      resourceSpans: {
        resource: { attributes: { key: string; value: { stringValue?: string } }[] };
        scopeSpans: { spans: Omit<ExportedSpan, "service">[] }[];
      }[];
    };
    for (const resourceSpans of payload.resourceSpans) {
      const service =
        resourceSpans.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue ?? "";
      for (const scope of resourceSpans.scopeSpans)
        for (const span of scope.spans) spans.push({ ...span, service });
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => server.close(),
  };
}

describe("tracing across services", () => {
  it("continues the caller's trace through a service into the next one, with linked client and server spans", async () => {
    const collector = await startCollector();
    const tokens = testTokens();
    const database = await createMigratedTestDatabase(["billing"]);
    const telemetry = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_EXPORTER: "otlp" };
    const catalog = await startServiceProcess("catalog", {
      ...tokens,
      ...telemetry,
      OTEL_SERVICE_NAME: "catalog",
      DATABASE_URL: database,
      KEYS_URL: "http://127.0.0.1:1",
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "catalog"),
      VARIABLES_KEY: Buffer.alloc(32, 7).toString("base64"),
    });
    const billing = await startServiceProcess("billing", {
      ...tokens,
      ...telemetry,
      OTEL_SERVICE_NAME: "billing",
      DATABASE_URL: database,
      CATALOG_URL: catalog.url,
    });

    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const client = createClient(
      BillingService,
      createGrpcTransport({
        baseUrl: billing.url,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${tokens.SERVICE_TOKEN}`);
            req.header.set("traceparent", `00-${traceId}-00f067aa0ba902b7-01`);
            return next(req);
          },
        ],
      }),
    );
    // Billing asks the catalog whether the project exists: a call that crosses a second service.
    await client
      .getBalance({ projectId: newId("prj"), actor: { kind: { case: "operator", value: {} } } })
      .catch(() => undefined);
    // A clean stop flushes every span; no waiting on export timers.
    expect(await billing.stop("SIGTERM")).to.equal(0);
    expect(await catalog.stop("SIGTERM")).to.equal(0);
    collector.close();

    const inTrace = collector.spans.filter((span) => span.traceId === traceId);
    const billingServer = inTrace.find(
      (s) => s.service === "billing" && s.name === "testrun.billing.v1.BillingService/GetBalance",
    );
    const billingClient = inTrace.find(
      (s) => s.service === "billing" && s.name === "testrun.catalog.v1.CatalogService/CheckAccess",
    );
    const catalogServer = inTrace.find(
      (s) => s.service === "catalog" && s.name === "testrun.catalog.v1.CatalogService/CheckAccess",
    );
    expect(billingServer?.parentSpanId).to.equal("00f067aa0ba902b7");
    expect(billingClient?.parentSpanId).to.equal(billingServer?.spanId);
    expect(catalogServer?.parentSpanId).to.equal(billingClient?.spanId);
    // No attribute of any span carries the service token.
    expect(JSON.stringify(collector.spans)).not.to.contain(tokens.SERVICE_TOKEN);
  });

  it("records an incoming URL with a key pasted into its path or query replaced", async () => {
    const collector = await startCollector();
    const tokens = testTokens();
    const gateway = await startGateway({
      ...tokens,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_SERVICE_NAME: "gateway",
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "gateway"),
    });
    const secret = keyShapedSecret();
    // No key in a header: answered 401 without asking any other service.
    const answer = await fetch(`${gateway.http}/v1/runs/${secret}?wait=${secret}`);
    expect(answer.status).to.equal(401);
    expect(await gateway.stop("SIGTERM")).to.equal(0);
    collector.close();

    const server = collector.spans.find((span) => span.kind === 2 && span.service === "gateway");
    const attribute = (key: string) => server?.attributes.find((a) => a.key === key)?.value.stringValue;
    expect(attribute("url.path")).to.equal("/v1/runs/trk_[redacted]");
    expect(attribute("url.query")).to.equal("wait=trk_[redacted]");
    expect(JSON.stringify(collector.spans)).not.to.contain(secret.slice(4));
  });
});
