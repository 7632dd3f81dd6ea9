// Where outbound connections to addresses users choose may go (docs/runs.md, "Egress"): the
// executors' connections to environments and the automation service's webhook deliveries share
// one guard, one policy and one set of settings.
export * from "./config.js";
export * from "./guard.js";
export * from "./policy.js";
