export * from "./process.js";
export * from "./servers.js";
