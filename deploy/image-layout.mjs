// Lays out the image's files from whatever packages services/ holds, so deploy/Dockerfile names no
// service and no package (plain Node, no dependencies: it runs in the build image).
//
//   node image-layout.mjs manifests <tree>   keeps only <tree>/services/*/package.json
//   node image-layout.mjs web                builds every services/*/web (vite) into services/*/web-build
//   node image-layout.mjs runtime <tree>     keeps only dist/ and web-build/ of <tree>/services/*
// Both tree modes leave out a package with devDependencies only (services/testing, the tests'
// harnesses): test code, so neither its files nor what it depends on reach the image.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

/** What each mode keeps of a package folder. */
const keep = {
  manifests: ["package.json"],
  // The manifests come with the deps stage's install.
  runtime: ["dist", "web-build"],
};
const viteConfigs = ["vite.config.ts", "vite.config.mjs", "vite.config.js"];

const [mode, tree = "."] = process.argv.slice(2);

/** The folders under services/, each a workspace package when it has a package.json. */
function packages(root) {
  const services = join(root, "services");
  return readdirSync(services, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(services, entry.name));
}

/** Whether a package is for development only: it declares devDependencies and no dependencies. */
function devOnly(folder) {
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  return manifest.dependencies === undefined && manifest.devDependencies !== undefined;
}

if (mode === "manifests" || mode === "runtime") {
  for (const folder of packages(tree)) {
    if (!existsSync(join(folder, "package.json")) || devOnly(folder)) {
      rmSync(folder, { recursive: true, force: true });
      continue;
    }
    for (const entry of readdirSync(folder)) {
      if (!keep[mode].includes(entry)) rmSync(join(folder, entry), { recursive: true, force: true });
    }
  }
} else if (mode === "web") {
  for (const folder of packages(".")) {
    const config = viteConfigs.map((file) => join(folder, "web", file)).find((file) => existsSync(file));
    if (!config) continue;
    const vite = join("node_modules", "vite", "bin", "vite.js");
    if (!existsSync(vite)) throw new Error(`${config} needs vite (${vite} is missing)`);
    const result = spawnSync(process.execPath, [vite, "build", "--config", config], { stdio: "inherit" });
    if (result.status !== 0) throw new Error(`vite build --config ${config} failed (${result.status})`);
    if (!existsSync(join(folder, "web-build", "index.html"))) {
      throw new Error(`vite build --config ${config} wrote no ${join(folder, "web-build", "index.html")}`);
    }
  }
} else {
  process.stderr.write("usage: image-layout.mjs manifests <tree> | web | runtime <tree>\n");
  process.exit(2);
}
