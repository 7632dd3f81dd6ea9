import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { baseConfigSchema, portVar, runService } from "@testrun/kit";
import { createApp } from "./app.js";

await runService({
  name: "gateway",
  // PORT serves gRPC health (for uniform probes); HTTP_PORT serves /v1.
  config: baseConfigSchema.extend({ PORT: portVar(7100), HTTP_PORT: portVar(8080) }),
  async setup({ config, logger, onShutdown }) {
    const app = createApp();
    app.on("error", (err) => logger.error({ err }, "request failed"));
    const server = app.listen(config.HTTP_PORT, config.HOST);
    await once(server, "listening");
    logger.info({ httpPort: (server.address() as AddressInfo).port }, "http listening");
    onShutdown(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
    );
    return [];
  },
});
