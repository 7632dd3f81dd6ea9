import { Migration20261122054120_initial } from "./Migration20261122054120_initial.js";

// Every migration of the billing schema, oldest first. New ones come from `make migration SERVICE=billing`.
export const migrations = [{ name: "Migration20261122054120_initial", class: Migration20261122054120_initial }];
