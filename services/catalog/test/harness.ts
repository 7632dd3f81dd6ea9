// Moved to @testrun/kit/testing (catalog.ts); the catalog's own tests start it in-process
// (@testrun/catalog/testing). Kept for the tests of other packages that still import it by path
// (runs, executor), until they import @testrun/kit/testing themselves.
export {
  apiKey,
  type Catalog,
  type CatalogProcess as Harness,
  catalogClient,
  httpStep,
  member,
  newProject,
  operator,
  rejects,
  seedOrganization,
  startCatalogProcess as startCatalog,
  unique,
} from "@testrun/kit/testing";
