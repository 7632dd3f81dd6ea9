import { readdir, readFile } from "node:fs/promises";
import { defaultSandboxUid, sandboxUidCount } from "../src/sandbox/index.js";

/**
 * The pids of processes of `uids` on this host (default: any of the sandboxes' range, which other
 * test files running sandboxes at the same time share): none once those sandboxes ended.
 */
export async function sandboxProcesses(uids?: readonly number[]): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    const ours = uids
      ? uids.includes(uid)
      : uid >= defaultSandboxUid && uid < defaultSandboxUid + sandboxUidCount;
    if (ours) found.push(Number(name));
  }
  return found;
}
