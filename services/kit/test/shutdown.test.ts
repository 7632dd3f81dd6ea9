import { readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { shutdownCleanupMs } from "@testrun/kit";
import {
  eventually,
  runServiceCommand,
  type ServiceProcess,
  startServiceProcess,
  startThrowawayPostgres,
  startThrowawayRedis,
  type ThrowawayServer,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";

/**
 * SIGTERM ends a service process within its shutdown budget even when PostgreSQL and Redis hang
 * (docs/architecture.md, "Graceful shutdown"). Servers of its own, frozen with SIGSTOP: their
 * connections stay open and unanswered, which a clean-up step waits on for ever unless bounded.
 */
describe("a service process whose PostgreSQL and Redis hang when it is told to stop", function () {
  this.timeout(90_000);
  const timeoutMs = 1_000;
  let postgres: ThrowawayServer;
  let redis: ThrowawayServer;
  let service: ServiceProcess;

  before(async () => {
    [postgres, redis] = await Promise.all([startThrowawayPostgres(), startThrowawayRedis()]);
    const env = {
      ...testTokens(),
      DATABASE_URL: postgres.url,
      REDIS_URL: redis.url,
      // Never called here: nothing listens there.
      CATALOG_URL: "http://127.0.0.1:1",
      BILLING_URL: "http://127.0.0.1:1",
    };
    await runServiceCommand("runs", ["migrate"], env);
    // The runs service: a database, Redis, and a reconciler reading the database every 20 ms.
    service = await startServiceProcess("runs", {
      ...env,
      RECONCILE_INTERVAL_MS: "20",
      SHUTDOWN_TIMEOUT_MS: String(timeoutMs),
    });
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await Promise.all([postgres?.stop(), redis?.stop()]);
  });

  it("exits 1 within SHUTDOWN_TIMEOUT_MS and the clean-up allowance, saying what it left unfinished", async () => {
    // PostgreSQL first: a reconciler pass that met a frozen Redis first would wait out its command
    // timeout before it sent the query this test waits for (too slow on a busy machine).
    await postgres.pause();
    // A reconciler pass is stuck: its query sits unread on a connection to the frozen PostgreSQL.
    // Stopping the reconciler waits for that pass, closing the pool for that connection.
    await eventually(
      async () => ((await unreadBytes(new URL(postgres.url).port)) > 0 ? true : undefined),
      "a query to wait on the frozen PostgreSQL",
      60_000,
    );
    await redis.pause();
    const exited = service.stop("SIGTERM");
    // The bound under test, with a generous margin for a busy machine.
    const bound = timeoutMs + shutdownCleanupMs + 5_000;
    const outcome = await Promise.race([exited, delay(bound, "still running", { ref: false })]);
    expect(outcome, `exit code, or still running ${bound} ms after SIGTERM`).to.equal(1);
    const ranOut = service
      .output()
      .map((line) => (line.startsWith("{") ? JSON.parse(line) : {}))
      .find((entry) => entry.msg === "shutdown budget ran out");
    expect(ranOut?.level).to.equal("error");
    expect(ranOut?.unfinished).to.be.an("array").that.is.not.empty;
  });
});

/** Bytes received on 127.0.0.1:`port` that the (frozen) server has not read yet (/proc/net/tcp). */
async function unreadBytes(port: string): Promise<number> {
  const local = `0100007F:${Number(port).toString(16).toUpperCase().padStart(4, "0")}`;
  let unread = 0;
  for (const line of (await readFile("/proc/net/tcp", "utf8")).split("\n").slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue ...
    const [, address, , , queues] = line.trim().split(/\s+/);
    if (address === local) unread += Number.parseInt(queues?.split(":")[1] ?? "0", 16);
  }
  return unread;
}
