import { readdir, readFile } from "node:fs/promises";
import { defaultSandboxUid, sandboxUidCount } from "../src/sandbox/index.js";

/** The pids of processes of the sandboxes' uids on this host: none once every sandbox ended. */
export async function sandboxProcesses(): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    if (uid >= defaultSandboxUid && uid < defaultSandboxUid + sandboxUidCount) found.push(Number(name));
  }
  return found;
}
