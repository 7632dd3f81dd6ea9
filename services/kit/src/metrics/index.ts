export * from "./http.js";
export * from "./red.js";
export * from "./registry.js";
export * from "./server.js";
