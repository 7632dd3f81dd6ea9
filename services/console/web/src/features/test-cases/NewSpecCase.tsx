// Creating a Playwright spec case (Editors and above; docs/console.md, "Playwright spec cases"): a
// name, the spec file's path and its source in a highlighted editor. Helper files come with a
// content import (`testrunctl content import --specs`); once created, the case's page edits its
// files. What the catalog refuses is listed by field, each naming the bound passed.
import { useMutation } from "@connectrpc/connect-query";
import { playwrightBounds } from "@testrun/content-file";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useState } from "react";
import { Link, useNavigate } from "react-router";
import { fieldViolationsOf, messageOf } from "../../api";
import { CodeField, TextField } from "../../components/Inputs";
import { CodeView } from "../../components/LazyCodeView";
import { useInvalidate } from "../../components/useInvalidate";
import { useProject } from "../../project";

/** What a new spec starts as: a test a person changes rather than a blank page. */
const template = `import { test, expect } from "@playwright/test";

test("home page has a title", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveTitle(/.+/);
});
`;

/** The catalog's field names, as this form calls them. */
const fieldNames: Record<string, string> = {
  name: "Name",
  "playwright.spec.path": "Spec file",
  "playwright.spec.source": "Source",
  playwright: "Spec",
};

export function NewSpecCase() {
  const { projectId, path } = useProject();
  const navigate = useNavigate();
  const invalidate = useInvalidate();
  const create = useMutation(ConsoleService.method.createTestCase);
  const [name, setName] = useState("");
  const [specPath, setSpecPath] = useState("tests/home.spec.ts");
  const [source, setSource] = useState(template);
  const violations = fieldViolationsOf(create.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { projectId, name, tags: [], playwright: { spec: { path: specPath, source }, files: [] } },
      {
        onSuccess: async ({ testCase }) => {
          await invalidate(ConsoleService.method.listTestCases);
          navigate(path(`/test-cases/${testCase?.id ?? ""}`));
        },
      },
    );
  };
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-cases")}>Test cases</Link>
      </p>
      <div className="page-head">
        <h1>New Playwright spec</h1>
      </div>
      <p className="lead">
        One spec file written with <code>@playwright/test</code>; each <code>test()</code> in it is a step of
        the test&apos;s results. A folder of specs with their helper files is imported with{" "}
        <code>testrunctl content import --specs</code>.
      </p>
      <form className="editor" onSubmit={submit} noValidate aria-label="Playwright spec">
        <section className="panel editor-about" aria-label="About">
          <TextField
            label="Name"
            hint="Shown in runs and results. At most 200 characters."
            required
            value={name}
            onChange={setName}
          />
          <CodeField
            label="Spec file"
            hint="Its path in your repository: relative, ending in .spec.ts, .spec.js, .test.ts or .test.js. An import matches the case by it."
            required
            value={specPath}
            onChange={setSpecPath}
          />
        </section>
        <section className="section" aria-labelledby="source-heading">
          <h2 id="source-heading">
            Source <span className="muted small">at most {playwrightBounds.specBytes / 1024} KiB</span>
          </h2>
          <CodeView
            value={source}
            onChange={setSource}
            readOnly={false}
            label="Source of the spec"
            typescript={!/\.js$/.test(specPath)}
          />
        </section>
        {create.error !== null && (
          <div className="notice notice-error" role="alert">
            {violations.length === 0 ? (
              messageOf(create.error)
            ) : (
              <ul>
                {violations.map((v) => (
                  <li key={`${v.field}:${v.description}`}>
                    {fieldNames[v.field] ?? v.field}: {v.description}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        <div className="editor-actions">
          <Link className="button" to={path("/test-cases")}>
            Cancel
          </Link>
          <button
            type="submit"
            className="button button-primary"
            disabled={create.isPending}
            aria-busy={create.isPending}
          >
            {create.isPending ? "Creating…" : "Create spec case"}
          </button>
        </div>
      </form>
    </>
  );
}
