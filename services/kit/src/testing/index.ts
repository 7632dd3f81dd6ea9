export * from "./process.js";
export * from "./servers.js";
export * from "./wait.js";
