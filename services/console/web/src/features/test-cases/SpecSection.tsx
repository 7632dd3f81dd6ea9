// A Playwright spec case's files on its page (docs/console.md, "Playwright spec cases"): the spec
// and each helper file, highlighted; Editors change a file's source and save the spec as a new
// version (the catalog checks it against its bounds, playwrightBounds, and names what is past one).
import { useMutation } from "@connectrpc/connect-query";
import { playwrightBounds } from "@testrun/content-file";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { ErrorNotice } from "../../components/Dialog";
import { CodeView } from "../../components/LazyCodeView";
import { useInvalidate } from "../../components/useInvalidate";
import { plural } from "../../format";

export function SpecSection({
  projectId,
  testCase,
  editable,
  onSaved,
}: {
  projectId: string;
  testCase: TestCase;
  /** An Editor on the current version. */
  editable: boolean;
  onSaved: (notice: string) => void;
}) {
  const spec = testCase.playwright;
  const files = [...(spec?.spec ? [spec.spec] : []), ...(spec?.files ?? [])];
  const [chosen, setChosen] = useState(0);
  // Edited sources by file index; a file not in it is as stored.
  const [edits, setEdits] = useState<Record<number, string>>({});
  const invalidate = useInvalidate();
  const save = useMutation(ConsoleService.method.updateTestCase);
  const file = files[chosen] ?? files[0];
  if (!spec || !file) return null;
  const sourceOf = (index: number) => edits[index] ?? files[index]?.source ?? "";
  const dirty = Object.keys(edits).some((key) => edits[Number(key)] !== files[Number(key)]?.source);
  const submit = () =>
    save.mutate(
      {
        projectId,
        testCaseId: testCase.id,
        expectedVersion: testCase.version,
        playwright: {
          spec: { path: files[0]?.path ?? "", source: sourceOf(0) },
          files: files.slice(1).map((f, i) => ({ path: f.path, source: sourceOf(i + 1) })),
        },
      },
      {
        onSuccess: async (saved) => {
          // The edits go once the saved version is read back, so the editor never shows the old one.
          await invalidate(ConsoleService.method.getTestCase, ConsoleService.method.listTestCases);
          setEdits({});
          onSaved(`Spec saved as version ${saved.testCase?.version ?? ""}.`);
        },
      },
    );
  return (
    <section aria-labelledby="spec-heading" className="section">
      <h2 id="spec-heading">Playwright spec</h2>
      <p className="muted small">
        Each <code>test()</code> is one step of the test&apos;s results; variables reach it as{" "}
        <code>process.env.NAME</code> and the environment&apos;s base URL is <code>baseURL</code>.{" "}
        {plural(files.length - 1, "helper file")}; at most {playwrightBounds.files} helper files,{" "}
        {playwrightBounds.specBytes / 1024} KiB a file and {playwrightBounds.totalBytes / 1024 / 1024} MiB in
        all.
      </p>
      {files.length > 1 && (
        <div className="spec-files" role="tablist" aria-label="Files">
          {files.map((f, index) => (
            <button
              key={f.path}
              type="button"
              role="tab"
              aria-selected={index === chosen}
              className={index === chosen ? "spec-file spec-file-chosen" : "spec-file"}
              onClick={() => setChosen(index)}
            >
              {f.path}
            </button>
          ))}
        </div>
      )}
      {files.length === 1 && (
        <p className="spec-path">
          <code>{file.path}</code>
        </p>
      )}
      <CodeView
        key={`${chosen}:${testCase.version}`}
        value={sourceOf(chosen)}
        readOnly={!editable}
        label={`Source of ${file.path}`}
        typescript={!/\.(c|m)?js$/.test(file.path)}
        onChange={(source) => setEdits((before) => ({ ...before, [chosen]: source }))}
      />
      <ErrorNotice error={save.error} />
      {editable && (
        <div className="spec-actions">
          <button
            type="button"
            className="button button-primary"
            disabled={!dirty || save.isPending}
            aria-busy={save.isPending}
            onClick={submit}
          >
            {save.isPending ? "Saving…" : "Save spec"}
          </button>
          {dirty && (
            <button type="button" className="button" onClick={() => setEdits({})} disabled={save.isPending}>
              Discard changes
            </button>
          )}
        </div>
      )}
    </section>
  );
}
