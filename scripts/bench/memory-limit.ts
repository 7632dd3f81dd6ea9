// BENCH_MEMORY_LIMIT_MIB of `make bench` (scripts/bench.ts): each service in a memory cgroup of its
// own with that limit, as in a pod with the chart's memory limit. It matters beyond the limit
// itself: Node sizes V8's heap from the container's limit (under 384 MiB, a 1 MiB semi-space), so
// a service's CPU per request in a pod differs from one on a machine with plenty of memory
// (docs/development.md, "Benchmarks"). Linux only, as root, cgroup v1 or v2.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** This process's memory cgroup directory, whichever cgroup version the machine mounts. */
function ownMemoryCgroup(): { dir: string; limitFile: string } {
  const lines = readFileSync("/proc/self/cgroup", "utf8").trim().split("\n");
  const v1 = lines
    .map((line) => line.split(":"))
    .find(([, controllers]) => controllers?.split(",").includes("memory"));
  if (v1?.[2] !== undefined)
    return { dir: join("/sys/fs/cgroup/memory", v1[2]), limitFile: "memory.limit_in_bytes" };
  const v2 = lines.find((line) => line.startsWith("0::"));
  if (v2 !== undefined && existsSync("/sys/fs/cgroup/cgroup.controllers"))
    return { dir: join("/sys/fs/cgroup", v2.slice(3)), limitFile: "memory.max" };
  throw new Error("BENCH_MEMORY_LIMIT_MIB needs a memory cgroup (cgroup v1 or v2)");
}

/** Memory cgroups of the benchmark's services: made on demand, removed by `close`. */
export class MemoryLimits {
  private readonly made: string[] = [];
  private readonly parent = ownMemoryCgroup();

  constructor(private readonly limitMiB: number) {}

  /** A command that joins a fresh cgroup limited to limitMiB, then runs `file` with `args`. */
  wrap(name: string, file: string, args: string[]): { file: string; args: string[] } {
    const dir = join(this.parent.dir, `testrun-bench-${process.pid}-${name}`);
    mkdirSync(dir);
    this.made.push(dir);
    writeFileSync(join(dir, this.parent.limitFile), String(this.limitMiB * 1024 * 1024));
    // The shell moves itself into the cgroup before exec: node starts there, with the limit.
    return { file: "/bin/sh", args: ["-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, file, ...args] };
  }

  /** Removes the cgroups (their processes must have exited). */
  close(): void {
    for (const dir of this.made.splice(0)) {
      try {
        rmdirSync(dir);
      } catch {
        // A process still inside: the cgroup goes when the machine restarts.
      }
    }
  }
}
