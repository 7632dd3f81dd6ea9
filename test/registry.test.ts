// The registry of services (helm/testrun/services.yaml) against what cannot read it: the services'
// code and the places written by hand. Each failure says what to add where. (The chart reads the
// registry itself: test/chart.test.ts; the image needs no list: test/image.test.ts.)
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { repoRoot } from "@testrun/testing";
import { expect } from "chai";
import { parse } from "yaml";
import { parseRegistry, registryPath, services } from "../scripts/services.js";

const names = services.map((service) => service.name);
const read = (path: string) => readFileSync(`${repoRoot}${path}`, "utf8");
/** Workspace packages: services/<pkg> with a package.json. */
const packages = readdirSync(`${repoRoot}services`).filter((pkg) =>
  existsSync(`${repoRoot}services/${pkg}/package.json`),
);
/** Packages with a main that are not services (the launcher's tools). */
const tools = ["cli"];

interface ConfigSchema {
  shape: Record<string, { safeParse(value: unknown): { data?: unknown } } | undefined>;
}
const configKeys = new Map<string, string[]>();
const configSchemas = new Map<string, ConfigSchema>();
for (const name of names) {
  const module = (await import(`${repoRoot}services/${name}/src/config.ts`)) as {
    configSchema: ConfigSchema;
  };
  configKeys.set(name, Object.keys(module.configSchema.shape));
  configSchemas.set(name, module.configSchema);
}

/** The rows of Markdown tables whose first cell is `name`. */
const tableRows = (markdown: string, name: string) =>
  markdown.split("\n").filter((line) => new RegExp(`^\\|\\s*${name}\\s*\\|`).test(line));

describe("the registry of services (helm/testrun/services.yaml)", () => {
  it("lists every package with a main (but the tools), each with its config", () => {
    const withMain = packages.filter(
      (pkg) => !tools.includes(pkg) && existsSync(`${repoRoot}services/${pkg}/src/main.ts`),
    );
    expect(
      withMain.filter((pkg) => !names.includes(pkg)),
      `services/<name>/src/main.ts without an entry in ${registryPath}: add one`,
    ).to.deep.equal([]);
    expect(
      names.filter((name) => !existsSync(`${repoRoot}services/${name}/src/main.ts`)),
      "registry entries without services/<name>/src/main.ts",
    ).to.deep.equal([]);
  });

  it("says which services each calls, as its config's <NAME>_URL variables do", () => {
    for (const service of services) {
      const urls = (configKeys.get(service.name) ?? [])
        .map((key) => /^([A-Z]+)_URL$/.exec(key)?.[1]?.toLowerCase() ?? "")
        .filter((target) => names.includes(target));
      expect(
        [...service.calls].sort(),
        `${service.name}: services.yaml calls must be the services named by <NAME>_URL in services/${service.name}/src/config.ts`,
      ).to.deep.equal(urls.sort());
    }
  });

  it("gives every service the metrics port its config defaults to (METRICS_PORT)", () => {
    for (const service of services) {
      const metricsPort = configSchemas.get(service.name)?.shape.METRICS_PORT?.safeParse(undefined).data;
      expect(
        metricsPort,
        `${service.name}: services.yaml metricsPort must be the METRICS_PORT default of services/${service.name}/src/config.ts`,
      ).to.equal(service.metricsPort);
    }
  });

  it("names only secrets the service's config declares", () => {
    for (const service of services) {
      const declared = configKeys.get(service.name) ?? [];
      expect(
        [...service.secrets, ...service.optionalSecrets].filter((secret) => !declared.includes(secret)),
        `${service.name}: secrets in services.yaml that services/${service.name}/src/config.ts does not declare`,
      ).to.deep.equal([]);
    }
  });

  it("names in env only variables the service's config declares, none of its secrets", () => {
    for (const service of services) {
      const declared = configKeys.get(service.name) ?? [];
      expect(
        service.env.filter((variable) => !declared.includes(variable)),
        `${service.name}: env in services.yaml that services/${service.name}/src/config.ts does not declare`,
      ).to.deep.equal([]);
      expect(
        service.env.filter((variable) => [...service.secrets, ...service.optionalSecrets].includes(variable)),
        `${service.name}: env in services.yaml that are its secrets`,
      ).to.deep.equal([]);
    }
    expect(() =>
      parseRegistry(
        "services:\n  - { name: a, port: 1, metricsPort: 2, migrates: false, env: [lease_ms] }\n",
      ),
    ).to.throw(/services\[0\] \(a\): env: lease_ms is not a variable name/);
  });

  it("marks as migrating exactly the services with a src/db folder", () => {
    for (const service of services) {
      expect(
        service.migrates,
        `${service.name}: services.yaml migrates must be ${existsSync(`${repoRoot}services/${service.name}/src/db`)} (src/db)`,
      ).to.equal(existsSync(`${repoRoot}services/${service.name}/src/db`));
    }
  });

  it("refuses malformed entries with a message naming them", () => {
    expect(() =>
      parseRegistry(
        "services:\n  - name: a\n    port: 1\n    metricsPort: 2\n    migrates: false\n    bogus: 1\n",
      ),
    ).to.throw(/services\[0\] \(a\): unknown key "bogus"/);
    expect(() =>
      parseRegistry(
        "services:\n  - { name: a, port: 1, metricsPort: 2, migrates: false }\n  - { name: b, port: 1, metricsPort: 3, migrates: false }\n",
      ),
    ).to.throw(/port 1 is used twice/);
    expect(() =>
      parseRegistry("services:\n  - { name: a, port: 1, metricsPort: 2, migrates: false, calls: [z] }\n"),
    ).to.throw(/a calls unknown z/);
  });

  it("gives a Redis user (its rules) to exactly the services whose secrets hold REDIS_URL, never a wide rule", () => {
    const entry = (fields: string) =>
      `services:\n  - { name: a, port: 1, metricsPort: 2, migrates: false, ${fields} }\n`;
    expect(() => parseRegistry(entry("secrets: [REDIS_URL]"))).to.throw(/a needs redis rules exactly when/);
    expect(() => parseRegistry(entry('redis: "~k +get"'))).to.throw(/a needs redis rules exactly when/);
    expect(parseRegistry(entry('secrets: [REDIS_URL], redis: "~k:* +get"'))[0]?.redis).to.equal("~k:* +get");
    for (const wide of ["~*", "+@all", "&*", "%R~*", "allkeys", "nopass", ">password", "on", "+@dangerous"]) {
      expect(() => parseRegistry(entry(`secrets: [REDIS_URL], redis: "~k ${wide}"`)), wide).to.throw(
        /not a rule a service may have/,
      );
    }
  });

  it("is what `npm run build` builds: tsconfig.build.json references every workspace package", () => {
    const references = (
      parse(read("tsconfig.build.json").replace(/^\s*\/\/.*$/gm, "")) as { references: { path: string }[] }
    ).references.map((reference) => reference.path);
    expect(
      packages
        .filter((pkg) => existsSync(`${repoRoot}services/${pkg}/tsconfig.build.json`))
        .map((pkg) => `services/${pkg}/tsconfig.build.json`)
        .filter((path) => !references.includes(path)),
      "packages missing from tsconfig.build.json references: add them",
    ).to.deep.equal([]);
  });

  it("has a values.yaml entry (components.<name>) for every service", () => {
    const values = parse(read("helm/testrun/values.yaml")) as { components?: Record<string, unknown> };
    expect(
      names.filter((name) => !values.components?.[name]),
      "services without components.<name> in helm/testrun/values.yaml: copy another component's entry",
    ).to.deep.equal([]);
  });

  it("has a proto package for every service with an API of its own (proto/testrun/<name>/v1)", () => {
    // The executor serves only health; the gateway's API is REST.
    const withoutProto = ["executor", "gateway"];
    expect(
      names
        .filter((name) => !withoutProto.includes(name))
        .filter((name) => !existsSync(`${repoRoot}proto/testrun/${name}/v1`)),
      "services without proto/testrun/<name>/v1",
    ).to.deep.equal([]);
  });

  const portTables = [
    { file: "README.md", what: "the ports table (## Ports)" },
    { file: "docs/deploy.md", what: "the network policies table" },
  ];
  for (const { file, what } of portTables) {
    it(`documents every service's ports in ${file}`, () => {
      const markdown = read(file);
      const missing = services.flatMap((service) => {
        const rows = tableRows(markdown, service.name).join("\n");
        const ports = [service.port, service.metricsPort, ...(service.httpPort ? [service.httpPort] : [])];
        return ports
          .filter((port) => !new RegExp(`\\b${port}\\b`).test(rows))
          .map((port) => `${service.name} ${port}`);
      });
      expect(missing, `${file}: rows "| <service> | …port… |" missing from ${what}`).to.deep.equal([]);
    });
  }

  it("documents every Redis user's rules in docs/deploy.md (Redis users), as the registry gives them", () => {
    const deploy = read("docs/deploy.md");
    const registry = parse(read("helm/testrun/services.yaml")) as { redisCommon: string };
    expect(deploy, "docs/deploy.md: the rules every user starts from").to.contain(
      `Every user starts from \`${registry.redisCommon}\``,
    );
    for (const service of services.filter((entry) => entry.redis !== undefined)) {
      const row = tableRows(deploy, `\`testrun-${service.name}\``)[0];
      const documented = row
        ?.split(/(?<!\\)\|/)[3]
        ?.trim()
        .replaceAll("\\|", "|")
        .replaceAll("`", "");
      expect(documented, `docs/deploy.md: the row of testrun-${service.name} in "Redis users"`).to.equal(
        service.redis,
      );
    }
  });

  it("names every service's ports in helm/testrun/README.md", () => {
    const readme = read("helm/testrun/README.md");
    const missing = services.filter(
      (service) =>
        !readme.includes(`${service.name} ${service.port}`) &&
        !(service.httpPort && readme.includes(`${service.name} ${service.httpPort}`)),
    );
    expect(
      missing.map((service) => service.name),
      "helm/testrun/README.md: services whose ports the overview does not give (`<name> <port>`)",
    ).to.deep.equal([]);
  });
});
