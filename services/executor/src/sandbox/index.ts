// Runs hostile code isolated (docs/security.md, "User code: Playwright specs"): run.ts's API.
export {
  canMakeSandbox,
  defaultSandboxLimits,
  defaultSandboxUid,
  runSandboxed,
  type SandboxLimitHit,
  type SandboxLimits,
  type SandboxOptions,
  type SandboxResult,
  SandboxUnavailable,
  sandboxHome,
  sandboxProxyPort,
  sandboxUidCount,
} from "./run.js";
