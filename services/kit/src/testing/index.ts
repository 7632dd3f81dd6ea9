export * from "./bodies.js";
export * from "./metrics.js";
export * from "./minio.js";
export * from "./process.js";
export * from "./redis-users.js";
export * from "./servers.js";
export * from "./wait.js";
