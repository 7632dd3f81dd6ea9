// The import graph of the workspace's source (services/*/src, and the console's web/src): which
// module imports which, type-only imports and re-exports included, workspace packages (@testrun/…)
// followed to the source file their `exports` name. It finds circles, between modules and between
// packages; test/import-graph.test.ts keeps there being none (docs/architecture.md, "Where things
// live"). `npx tsx scripts/import-graph.ts` prints them.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

interface Package {
  name: string;
  dir: string;
  /** Export subpath ("." or "./mcp") -> its source file. */
  sources: Map<string, string>;
}

export interface ImportGraph {
  /** Module -> the modules it imports (absolute paths). */
  modules: Map<string, Set<string>>;
  /** Package name -> the workspace packages its source imports. */
  packages: Map<string, Set<string>>;
}

const sourceExtensions = [".ts", ".tsx"];

function workspacePackages(root: string): Package[] {
  const servicesDir = join(root, "services");
  return readdirSync(servicesDir)
    .map((name) => join(servicesDir, name))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name: string;
        exports?: Record<string, string | { source?: string }>;
      };
      const sources = new Map<string, string>();
      for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
        if (typeof target === "object" && target.source) sources.set(subpath, resolve(dir, target.source));
      }
      return { name: manifest.name, dir, sources };
    });
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path);
    return sourceExtensions.some((ext) => name.endsWith(ext)) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A relative specifier as the file it names ("./a.js" is a.ts or a.tsx; the web app omits extensions). */
function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|jsx)$/, "");
  const candidates = [
    base,
    ...sourceExtensions.map((ext) => stem + ext),
    ...sourceExtensions.map((ext) => join(base, `index${ext}`)),
  ];
  return candidates.find((path) => sourceExtensions.some((ext) => path.endsWith(ext)) && existsSync(path));
}

/** The import graph of every workspace package's source under `root`. */
export function importGraph(root: string): ImportGraph {
  const packages = workspacePackages(root);
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  const graph: ImportGraph = { modules: new Map(), packages: new Map() };
  for (const pkg of packages) {
    graph.packages.set(pkg.name, new Set());
    const files = [...sourceFiles(join(pkg.dir, "src")), ...sourceFiles(join(pkg.dir, "web", "src"))];
    for (const file of files) {
      const imports = new Set<string>();
      graph.modules.set(file, imports);
      const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
      for (const { fileName: specifier } of importedFiles) {
        if (specifier.startsWith(".")) {
          const target = resolveRelative(file, specifier);
          if (target) imports.add(target);
          continue;
        }
        const match = /^(@testrun\/[^/]+)(\/.+)?$/.exec(specifier);
        const target = match && byName.get(match[1] ?? "");
        if (!target) continue;
        if (target !== pkg) graph.packages.get(pkg.name)?.add(target.name);
        const source = target.sources.get(match?.[2] ? `.${match[2]}` : ".");
        if (source) imports.add(source);
      }
    }
  }
  return graph;
}

/** The circles of a graph: each strongly connected set of two or more nodes, or a node importing itself. */
export function circles(edges: Map<string, Set<string>>): string[][] {
  // Tarjan's algorithm, iterative: the console's and the services' chains run deeper than a
  // comfortable recursion.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; next: string[] }[] = [];
    const enter = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: [...(edges.get(node) ?? [])] });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; next: string[] };
      const child = frame.next.shift();
      if (child !== undefined) {
        if (!index.has(child)) enter(child);
        else if (onStack.has(child))
          low.set(frame.node, Math.min(low.get(frame.node) ?? 0, index.get(child) ?? 0));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(frame.node) ?? 0));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const members: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        members.push(member);
      } while (member !== frame.node);
      if (members.length > 1 || edges.get(frame.node)?.has(frame.node)) found.push(members.sort());
    }
  }
  return found;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const root = resolve(import.meta.dirname, "..");
  const graph = importGraph(root);
  const moduleCircles = circles(graph.modules);
  const packageCircles = circles(graph.packages);
  const imports = [...graph.modules.values()].reduce((sum, set) => sum + set.size, 0);
  console.log(`${graph.modules.size} modules, ${imports} imports, ${graph.packages.size} packages`);
  for (const circle of moduleCircles)
    console.log(`module circle: ${circle.map((file) => relative(root, file)).join(" <-> ")}`);
  for (const circle of packageCircles) console.log(`package circle: ${circle.join(" <-> ")}`);
  if (moduleCircles.length + packageCircles.length > 0) process.exitCode = 1;
  else console.log("no circle");
}
