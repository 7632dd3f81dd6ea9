/**
 * Replays deploy/Dockerfile without a container engine: reads its stages and lays out a folder
 * as the final image holds it, so tests can start services from there with the image's ENTRYPOINT.
 *
 * What the replay understands is deliberately small, and anything else in the Dockerfile is an
 * error rather than silently skipped: FROM (stages), ARG, LABEL, WORKDIR, ENV, USER, ENTRYPOINT
 * (exec form), COPY (`--from=<stage>` or the build context; no globs, no other flags) and RUN
 * (a plain command line: no shell operators). The stage named `build` is the working copy itself:
 * its `npm ci` is the repository's own install, and its other RUN lines are run in the repository.
 * One RUN of another form is understood: Debian packages installed from a Debian image's own
 * archive (debianInstall below). This machine, which must run the same Debian release, stands in
 * for them: the replay checks they are installed here, and records them.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, utimes } from "node:fs/promises";
import { basename, dirname, join, posix, relative } from "node:path";

export interface Instruction {
  op: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string;
  /** The base image, with global ARG defaults substituted. */
  from: string;
  instructions: Instruction[];
}

/** Logical lines (continuations joined, comments dropped) grouped into stages. */
export function parseDockerfile(text: string): Stage[] {
  const lines: { text: string; line: number }[] = [];
  let current = "";
  let start = 0;
  text.split("\n").forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    if (current === "") start = index + 1;
    if (trimmed.endsWith("\\")) {
      current += `${trimmed.slice(0, -1).trim()} `;
      return;
    }
    lines.push({ text: current + trimmed, line: start });
    current = "";
  });

  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const { text: logical, line } of lines) {
    const match = /^(\S+)\s+(.*)$/.exec(logical);
    if (!match) throw new Error(`Dockerfile line ${line}: cannot read "${logical}"`);
    const op = String(match[1]).toUpperCase();
    const args = String(match[2]);
    if (op === "FROM") {
      const [image = "", as, name] = args.split(/\s+/);
      const from = image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => globalArgs.get(a ?? b) ?? "");
      stages.push({
        name: as?.toUpperCase() === "AS" && name ? name : String(stages.length),
        from,
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (op !== "ARG") throw new Error(`Dockerfile line ${line}: only ARG may come before the first FROM`);
      const [name = "", value = ""] = args.split("=", 2);
      globalArgs.set(name, value);
    } else {
      stages.at(-1)?.instructions.push({ op, args, line });
    }
  }
  return stages;
}

/** The image, laid out in a folder: what the final stage holds at its WORKDIR. */
export interface ImageReplay {
  /** The final stage's base image. */
  base: string;
  /** The host folder standing in for the final stage's WORKDIR. */
  root: string;
  workdir: string;
  /** ENTRYPOINT as written in the Dockerfile. */
  entrypoint: string[];
  /** The final stage's ENV. */
  env: Record<string, string>;
  /** USER, as written (e.g. "65532:65532"). */
  user: string | undefined;
  /** The final stage's COPY sources, by stage, as written. */
  copies: { from: string | undefined; sources: string[]; dest: string }[];
  /** Debian packages the stage installs (debianInstall), as written. */
  packages: string[];
}

/**
 * The one way a stage may install Debian packages, in one layer that keeps no package lists:
 * `apt-get update && apt-get install -y --no-install-recommends <packages> && rm -rf /var/lib/apt/lists/*`.
 * Answers the packages, or undefined for any other command.
 */
export function debianInstall(command: string): string[] | undefined {
  const match =
    /^apt-get update && apt-get install -y --no-install-recommends ((?:[a-z0-9][a-z0-9+.-]* ?)+) && rm -rf \/var\/lib\/apt\/lists\/\*$/.exec(
      command.trim(),
    );
  return match?.[1]?.trim().split(" ");
}

/** Checks that this machine runs the Debian release of `image` and has `packages` installed. */
async function checkDebianPackages(image: string, packages: string[], where: string): Promise<void> {
  const release = /^VERSION_CODENAME=(\w+)$/m.exec(
    await readFile("/etc/os-release", "utf8").catch(() => ""),
  )?.[1];
  if (!release || !image.includes(release))
    throw new Error(
      `${where}: ${image} installs Debian packages; the replay needs a machine of the same Debian release (this is ${release ?? "not Debian"})`,
    );
  const missing: string[] = [];
  // dpkg-query's own format placeholder, not a template.
  const statusFormat = "-f=$" + "{Status}";
  for (const name of packages) {
    const status = await new Promise<string>((resolve) =>
      execFile("dpkg-query", ["-W", statusFormat, name], (error, stdout) => resolve(error ? "" : stdout)),
    );
    if (status !== "install ok installed") missing.push(name);
  }
  if (missing.length > 0)
    throw new Error(
      `${where}: this machine stands in for the image's Debian packages, and lacks ${missing.join(", ")}: apt-get install -y --no-install-recommends ${missing.join(" ")} (scripts/install-prerequisites.sh does)`,
    );
}

export interface ReplayOptions {
  /** The build context: the repository. */
  context: string;
  /** An empty folder for the stages' file systems. */
  scratch: string;
  /** Extra arguments for `npm ci` (say --prefer-offline: the machine's cache has every package). */
  npmCiExtraArgs?: readonly string[];
  /**
   * Where the outcome of a RUN is kept, keyed by the command and every file of the stage before
   * it: the same install from the same lockfile is then restored instead of repeated.
   */
  runCache?: string;
}

/** Where a stage's file system lives on this machine: container path `prefix` is host folder `host`. */
interface StageFs {
  prefix: string;
  host: string;
}

/** The image the Dockerfile builds by default (its last stage), laid out in a folder. */
export async function replayDockerfile(stages: Stage[], options: ReplayOptions): Promise<ImageReplay> {
  const final = stages.at(-1);
  if (!final) throw new Error("the Dockerfile has no stage");
  const images = await replayTargets(stages, options, [final.name]);
  return images.get(final.name) as ImageReplay;
}

/** The images of several targets (`docker build --target <name>`), laid out in one pass. */
export async function replayTargets(
  stages: Stage[],
  options: ReplayOptions,
  targets: readonly string[],
): Promise<Map<string, ImageReplay>> {
  const filesystems = new Map<string, StageFs>();
  const images = new Map<string, ImageReplay>();
  for (const target of targets)
    if (!stages.some((stage) => stage.name === target))
      throw new Error(`the Dockerfile has no stage ${target}`);

  for (const stage of stages) {
    const workdir = stage.instructions.find((i) => i.op === "WORKDIR")?.args ?? "/";
    if (stage.instructions.filter((i) => i.op === "WORKDIR").length > 1) {
      throw new Error(`stage ${stage.name}: the replay supports one WORKDIR per stage`);
    }
    const fs: StageFs =
      stage.name === "build"
        ? { prefix: workdir, host: options.context }
        : { prefix: workdir, host: join(options.scratch, `stage-${stage.name}`) };
    await mkdir(fs.host, { recursive: true });
    filesystems.set(stage.name, fs);
    // A container path (absolute, or relative to `base`) on this machine.
    const toHost = (target: StageFs, path: string, base: string) => {
      const inside = posix.relative(target.prefix, posix.resolve(base, path));
      if (inside.startsWith("..")) {
        throw new Error(
          `stage ${stage.name}: ${path} is outside ${target.prefix}, which the replay cannot map`,
        );
      }
      return join(target.host, inside);
    };

    const replay: ImageReplay = {
      base: stage.from,
      root: fs.host,
      workdir,
      entrypoint: [],
      env: {},
      user: undefined,
      copies: [],
      packages: [],
    };
    for (const instruction of stage.instructions) {
      const where = `Dockerfile line ${instruction.line} (${instruction.op})`;
      switch (instruction.op) {
        case "ARG":
        case "LABEL":
        case "WORKDIR":
          break;
        case "ENV": {
          const [name = "", value = ""] = instruction.args.split("=", 2);
          replay.env[name] = value.replace(/^"(.*)"$/, "$1");
          break;
        }
        case "USER":
          replay.user = instruction.args;
          break;
        case "ENTRYPOINT":
          replay.entrypoint = JSON.parse(instruction.args) as string[];
          break;
        case "COPY": {
          const words = instruction.args.split(/\s+/);
          const flags = words.filter((w) => w.startsWith("--"));
          const paths = words.filter((w) => !w.startsWith("--"));
          const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
          if (flags.length > (from ? 1 : 0)) throw new Error(`${where}: the replay supports only --from`);
          const dest = paths.pop() ?? "";
          if (paths.length > 1 && !dest.endsWith("/"))
            throw new Error(`${where}: several sources need a folder`);
          const source = from === undefined ? undefined : filesystems.get(from);
          if (from !== undefined && !source) throw new Error(`${where}: no stage ${from} before this one`);
          for (const path of paths) {
            if (/[*?[]/.test(path)) throw new Error(`${where}: the replay supports no globs`);
            // Sources are paths in the other stage's file system, or in the build context.
            const hostSource = source ? toHost(source, path, "/") : join(options.context, path);
            const target = toHost(fs, dest, workdir);
            if (stage.name === "build") {
              // The working copy already holds what the build stage copies: only check it is there.
              await stat(hostSource);
              continue;
            }
            if ((await stat(hostSource)).isDirectory()) {
              // A scratch stage's files are never written again: hard links stand in for copies
              // (not for the working copy's, which the next build rewrites in place).
              await copyFolder(hostSource, target, { link: source?.host.startsWith(options.scratch) });
            } else {
              const hostDest = dest.endsWith("/") ? join(target, basename(hostSource)) : target;
              await mkdir(dirname(hostDest), { recursive: true });
              await copyFile(hostSource, hostDest);
            }
          }
          replay.copies.push({ from, sources: paths, dest });
          break;
        }
        case "RUN": {
          const packages = debianInstall(instruction.args);
          if (packages && stage.name !== "build") {
            await checkDebianPackages(stage.from, packages, where);
            replay.packages.push(...packages);
            break;
          }
          if (/[&|;<>`$()]/.test(instruction.args)) throw new Error(`${where}: the replay runs no shell`);
          const [command = "", ...args] = instruction.args.split(/\s+/);
          const isNpmCi = command === "npm" && args[0] === "ci";
          // The working copy's node_modules is the build stage's install.
          if (stage.name === "build" && isNpmCi) break;
          const argv = isNpmCi ? [...args, ...(options.npmCiExtraArgs ?? [])] : args;
          // The build runs in the working copy each time (tsc -b: quick when nothing changed).
          if (stage.name === "build") await run(command, argv, fs.host);
          // Each stage keeps its own latest outcome: one stage's RUN does not evict another's.
          else
            await runCached(command, argv, fs.host, options.runCache && join(options.runCache, stage.name));
          break;
        }
        default:
          throw new Error(`${where}: the replay does not know this instruction`);
      }
    }
    if (targets.includes(stage.name)) images.set(stage.name, replay);
  }
  return images;
}

/**
 * Copies a folder's contents into another, symlinks kept as links (node_modules/@testrun/* are
 * relative ones); with `link`, files are hard-linked when both sides are on one file system.
 */
async function copyFolder(source: string, target: string, options: { link?: boolean } = {}): Promise<void> {
  await mkdir(target, { recursive: true });
  // cp -a: fs.cp takes several times as long for a node_modules folder, and cannot hard-link.
  if (options.link) {
    const linked = await run("cp", ["-al", `${source}/.`, target], source).then(
      () => true,
      () => false,
    );
    if (linked) return;
  }
  await run("cp", ["-a", `${source}/.`, target], source);
}

/** Runs a command in a folder, or restores what it made there when it ran before on the same files. */
async function runCached(command: string, args: string[], cwd: string, cacheRoot?: string): Promise<void> {
  if (!cacheRoot) return run(command, args, cwd);
  const hash = createHash("sha256").update(JSON.stringify([process.version, command, args]));
  for (const file of (await readdir(cwd, { recursive: true, withFileTypes: true })).filter((f) =>
    f.isFile(),
  )) {
    const path = join(file.parentPath, file.name);
    hash.update(relative(cwd, path)).update(await readFile(path));
  }
  const key = hash.digest("hex").slice(0, 32);
  const cached = join(cacheRoot, key);
  // Nothing writes into a stage's folder after its RUN, so the cache can be linked, not copied. The
  // cache is the whole folder after the RUN: what the RUN deleted must go too.
  // Marked as used first, so a concurrent eviction spares it; gone meanwhile, it is a miss.
  if (await markUsed(cached)) {
    for (const entry of await readdir(cwd)) await rm(join(cwd, entry), { recursive: true, force: true });
    return copyFolder(cached, cwd, { link: true });
  }
  await run(command, args, cwd);
  // A unique name: another clone's run may be making the same entry at the same time.
  const partial = `${cached}.${randomBytes(6).toString("hex")}.partial`;
  await copyFolder(cwd, partial, { link: true });
  await rename(partial, cached).catch(() => rm(partial, { recursive: true, force: true }));
  await markUsed(cached);
  await keepLatestOutcomes(cacheRoot);
}

/** Sets an entry's time to now (what eviction goes by); false when there is no such entry. */
async function markUsed(entry: string): Promise<boolean> {
  const now = new Date();
  return utimes(entry, now, now).then(
    () => true,
    () => false,
  );
}

/**
 * The cache is shared by every clone on the machine (docs/development.md, "The image"), so it keeps
 * a few outcomes of each RUN, the most recently used: a node_modules folder is large, and a clone
 * on another branch should not evict this one's. An entry used in the last hour stays even past
 * `keep`: another run may be restoring from it. Unfinished entries of a run that died are swept.
 */
async function keepLatestOutcomes(cacheRoot: string, keep = 3): Promise<void> {
  const entries = await Promise.all(
    (await readdir(cacheRoot)).map(async (name) => ({
      name,
      usedMs: (await stat(join(cacheRoot, name)).catch(() => undefined))?.mtimeMs ?? 0,
    })),
  );
  const hourAgo = Date.now() - 3600_000;
  const dayAgo = Date.now() - 24 * 3600_000;
  const stale = [
    ...entries.filter((entry) => entry.name.endsWith(".partial") && entry.usedMs < dayAgo),
    ...entries
      .filter((entry) => !entry.name.endsWith(".partial"))
      .sort((a, b) => b.usedMs - a.usedMs)
      .slice(keep)
      .filter((entry) => entry.usedMs < hourAgo),
  ];
  for (const entry of stale) await rm(join(cacheRoot, entry.name), { recursive: true, force: true });
}

/** Runs a command with this process's Node first on PATH; rejects with its output when it fails. */
function run(command: string, args: string[], cwd: string): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
  };
  delete env.NODE_OPTIONS;
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve();
      reject(new Error(`${[command, ...args].join(" ")} failed in ${cwd}:\n${stderr}\n${stdout}`));
    });
  });
}
