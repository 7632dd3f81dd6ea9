// Figures for content documents (docs/runs.md, "Content documents"): how large a document of 500
// test cases is as YAML and JSON text and as its items in binary protobuf (the catalog's
// ImportContentRequest, against its 8 MiB bound; the console's ImportContent request, which the web
// app sends in binary, is the same size), and how long writing and reading its text takes (what
// testrunctl and the console's web app do; the console's server never does). Three shapes of test
// case: a small one (one GET), a typical one (five steps with headers, a JSON body and checks) and a
// heavy one (ten steps, each with a 2 KB JSON body). Prints a table; asserts nothing.
//
//   node --conditions=source --import tsx scripts/bench/content-document.ts
import { create, toBinary } from "@bufbuild/protobuf";
import {
  importItemsOf,
  readContentDocument,
  stepFromFile,
  writeContentDocument,
} from "@testrun/content-file";
import { ImportContentRequestSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";

const step = (index: number, body: unknown) =>
  stepFromFile(
    {
      name: `step ${index}: call the endpoint and check what it answers`,
      http: {
        method: "POST",
        path: `/api/v1/resources/${index}/items?include=details`,
        headers: { authorization: "Bearer {{token}}", "content-type": "application/json" },
        json: body,
        timeoutMs: 10000,
      },
      expect: {
        status: [200, 201],
        headers: { "content-type": "application/json" },
        json: { "$.ok": true, "$.items[0].id": index },
        bodyNotContains: ["error"],
        maxDurationMs: 2000,
      },
      save: { [`id${index}`]: "$.items[0].id" },
    },
    "s",
  );

const shapes = {
  small: () => [
    stepFromFile({ name: "health", http: { method: "GET", path: "/health" }, expect: { status: 200 } }, "s"),
  ],
  typical: () =>
    Array.from({ length: 5 }, (_, i) => step(i, { user: "{{USER}}", page: i, tags: ["a", "b"] })),
  heavy: () =>
    Array.from({ length: 10 }, (_, i) =>
      step(i, {
        rows: Array.from({ length: 40 }, (__, n) => ({ id: n, name: `row ${n}`, active: n % 2 === 0 })),
      }),
    ),
};

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;

function timed<T>(work: () => T): [T, number] {
  const started = performance.now();
  const result = work();
  return [result, performance.now() - started];
}

console.log("500 test cases and 20 plans of 25 test cases each, per shape of test case:\n");
console.log(
  ["shape", "YAML", "JSON", "items (proto)", "write YAML", "read YAML", "write JSON", "read JSON"]
    .map((h) => h.padEnd(14))
    .join(""),
);
for (const [shape, steps] of Object.entries(shapes)) {
  const testCases = Array.from({ length: 500 }, (_, i) => ({
    id: `tc_01jd${String(i).padStart(22, "0")}`,
    name: `test case ${i}: ${shape} checks of the shop`,
    tags: ["smoke", "shop"],
    enabled: true,
    steps: steps(),
  }));
  const testPlans = Array.from({ length: 20 }, (_, p) => ({
    id: `pln_01jd${String(p).padStart(22, "0")}`,
    name: `plan ${p}`,
    description: "Runs before every deploy.",
    testCaseIds: testCases.slice(p * 25, p * 25 + 25).map((c) => c.id),
  }));
  const [yaml, writeMs] = timed(() => writeContentDocument({ testCases, testPlans }, "yaml"));
  const [json, writeJsonMs] = timed(() => writeContentDocument({ testCases, testPlans }, "json"));
  const [document, readYamlMs] = timed(() => readContentDocument(yaml, "yaml"));
  const [, readJsonMs] = timed(() => readContentDocument(json, "json"));
  const catalogRequest = toBinary(
    ImportContentRequestSchema,
    create(ImportContentRequestSchema, {
      projectId: "prj_01jd0000000000000000000000",
      ...importItemsOf(document),
    }),
  ).length;
  console.log(
    [
      shape,
      mib(Buffer.byteLength(yaml)),
      mib(Buffer.byteLength(json)),
      mib(catalogRequest),
      `${writeMs.toFixed(0)} ms`,
      `${readYamlMs.toFixed(0)} ms`,
      `${writeJsonMs.toFixed(0)} ms`,
      `${readJsonMs.toFixed(0)} ms`,
    ]
      .map((cell) => cell.padEnd(14))
      .join(""),
  );
}
