// `testrun mcp`: the MCP tools (@testrun/mcp-tools) over stdio, for clients that launch a local server. Each
// tool call is one request of the /v1 REST API made with TESTRUN_URL and TESTRUN_API_KEY. stdout
// carries the protocol and nothing else; the server ends when the client closes stdin.
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type TestrunApi, testrunMcpServer } from "@testrun/mcp-tools";

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  /** Ends the server (SIGINT, SIGTERM). */
  stop?: AbortSignal;
}

/** Serves the tools on stdin/stdout until the client closes stdin (or `stop` aborts). */
export async function serveMcpOverStdio(api: TestrunApi, options: StdioOptions = {}): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const server = testrunMcpServer(api);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport(stdin, options.stdout ?? process.stdout));
  const close = () => void server.close();
  stdin.once("end", close);
  options.stop?.addEventListener("abort", close, { once: true });
  if (options.stop?.aborted) close();
  try {
    await closed;
  } finally {
    stdin.off("end", close);
    options.stop?.removeEventListener("abort", close);
  }
}
