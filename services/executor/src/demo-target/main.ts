// Entry of the demo target: `node --import tsx services/executor/src/demo-target/main.ts`.
// PORT (default 8090), HOST (default 127.0.0.1), DEMO_USER, DEMO_PASSWORD and DEMO_EMAIL (defaults:
// the credentials scripts/demo/seed.ts stores as the demo project's variables).
import { once } from "node:events";
import { createDemoTarget } from "./server.js";

const server = createDemoTarget({
  user: process.env.DEMO_USER ?? "demo",
  password: process.env.DEMO_PASSWORD ?? "demo-password",
  email: process.env.DEMO_EMAIL ?? "demo@demo.example",
});
server.listen(Number(process.env.PORT ?? 8090), process.env.HOST ?? "127.0.0.1");
await once(server, "listening");
const address = server.address();
const port = typeof address === "object" && address ? address.port : 0;
// One JSON line, like the services' "listening" line, so the same tooling can wait for it.
process.stdout.write(`${JSON.stringify({ service: "demo-target", msg: "listening", port })}\n`);

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
