// Entry point of the container image (deploy/Dockerfile): one image runs every service, and the
// container's arguments pick what runs.
//
//   launch.js <service>            serves it (until SIGTERM)
//   launch.js <service> migrate    applies its database migrations and exits
//   launch.js testrunctl <args>    the admin CLI
//
// It lives in the kit because the kit owns how a service process runs (runService, the telemetry
// preload); it imports the mains by path, so no package depends on the services it starts.
import { existsSync, readdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Programs that are not services, by the name they are run with, and their package. */
const tools: Record<string, string> = { testrunctl: "cli" };

// Built (dist/launch.js) this starts built mains; from source (src/launch.ts through tsx), sources.
const layout = basename(dirname(fileURLToPath(import.meta.url)));
const packagesRoot = new URL("../../", import.meta.url);
/**
 * Every service the image runs: each workspace package with a main (which calls runService), but
 * the tools. No list to keep: a new package under services/ with src/main.ts is a service
 * (helm/testrun/services.yaml is the registry; test/image.test.ts checks the two agree).
 */
const services = readdirSync(packagesRoot, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !Object.values(tools).includes(entry.name))
  .map((entry) => entry.name)
  .filter((pkg) =>
    ["main.js", ...(layout === "dist" ? [] : ["main.ts"])].some((file) =>
      existsSync(new URL(`${pkg}/${layout}/${file}`, packagesRoot)),
    ),
  )
  .sort();

const [name = "", ...args] = process.argv.slice(2);
const pkg = services.includes(name) ? name : Object.hasOwn(tools, name) ? tools[name] : undefined;
if (!pkg) {
  process.stderr.write(
    `${name ? `unknown service "${name}"` : "no service given"}\n` +
      "usage: <service> [serve|migrate] | testrunctl <command>\n" +
      `services: ${services.join(", ")}\n`,
  );
  process.exit(2);
}

const main = fileURLToPath(new URL(`${pkg}/${layout}/main.js`, packagesRoot));
// The program sees its arguments as if its main had been run directly: argv[2] is its command.
process.argv = [process.argv[0] ?? process.execPath, main, ...args];

if (services.includes(pkg)) {
  // Traces name the service without the deployment having to say it again.
  process.env.OTEL_SERVICE_NAME ??= name;
  // What `node --import preload` does: instrumentation is in place before the service's modules
  // (pg, ioredis, koa) are first imported, which only happens below.
  await import("./telemetry/preload.js");
}
await import(pathToFileURL(main).href);
