// A project's test cases and plans, environments and variable names as one file (docs/console.md,
// "Test cases as files"): Export writes the content document and downloads it; Import reads one,
// previews what it would create, change and leave alone, item by item with each item's problems,
// and applies it all or nothing, then names the variables still without a value. The file is read
// and written here, with the reader and writer testrunctl uses (@testrun/content-file); the
// catalog checks and matches the items (ImportContent).
import { create } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import {
  type FileFormat,
  formatOfFileName,
  InputError,
  importItemsOf,
  readContentDocument,
  writeContentDocument,
} from "@testrun/content-file";
import {
  ImportContentResponseSchema,
  type ImportedItem,
  type ImportContentResponse as ImportResult,
  ItemOutcome,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { ConsoleService, ImportContentRequestSchema } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, type ReactNode, type RefObject, useEffect, useRef, useState } from "react";
import { Link } from "react-router";
import { binaryTransport, errorOf } from "../api";
import { binaryBytes, catalogMessageBytes } from "../catalog-bound";
import { count, plural } from "../format";
import { DataTable } from "./DataTable";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "./Dialog";
import { Field, FieldSet } from "./Field";
import { QueryView } from "./States";
import { Badge } from "./Status";

/** What the console reads of an import at most: as much as the catalog takes in one call. */
const maxImportBytes = catalogMessageBytes;
/** A larger file is not read at all: its items could not be under maxImportBytes anyway. */
const maxFileBytes = 4 * maxImportBytes;

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** `testrun-<project name as lower-case words joined by ->.yaml`. */
export function exportFileName(projectName: string, format: FileFormat): string {
  const words = projectName
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `testrun-${words || "project"}.${format}`;
}

/** Hands `text` to the browser as a file download. */
function download(text: string, fileName: string, format: FileFormat): void {
  const blob = new Blob([text], { type: format === "json" ? "application/json" : "application/yaml" });
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has handed the file over.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function ExportDialog({
  projectId,
  projectName,
  open,
  onClose,
}: DialogProps & { projectId: string; projectName: string }) {
  const content = useQuery(ConsoleService.method.exportContent, { projectId }, { enabled: open });
  const [format, setFormat] = useState<FileFormat>("yaml");
  const fileName = exportFileName(projectName, format);
  const save = () => {
    if (!content.data) return;
    download(writeContentDocument({ ...content.data, projectId }, format), fileName, format);
    onClose();
  };
  return (
    <Dialog title="Export test cases and plans" open={open} onClose={onClose}>
      <div className="stack">
        <p>
          One file holding every test case and test plan of the project, each with its id, its environments
          and the names of its variables (never their values). Keep it in your repository and review changes
          to it like code; <strong>Import</strong> applies a changed copy back, here or in another project.
        </p>
        <QueryView query={content} what="the test cases and plans">
          {(data) => (
            <p className="preview preview-line" role="status">
              {joined([
                plural(data.testCases.length, "test case"),
                plural(data.testPlans.length, "test plan"),
                ...(data.environments.length > 0 ? [plural(data.environments.length, "environment")] : []),
                ...(data.variableNames.length > 0
                  ? [plural(data.variableNames.length, "variable name")]
                  : []),
              ])}
            </p>
          )}
        </QueryView>
        <FieldSet legend="Format">
          <div className="choices">
            {(["yaml", "json"] as const).map((value) => (
              <label key={value} className="choice">
                <input
                  type="radio"
                  name="export-format"
                  value={value}
                  checked={format === value}
                  onChange={() => setFormat(value)}
                />
                {value === "yaml" ? "YAML" : "JSON"}
              </label>
            ))}
          </div>
        </FieldSet>
        <DialogActions
          onCancel={onClose}
          label={`Download ${fileName}`}
          busyLabel="Reading…"
          busy={content.isPending}
          disabled={!content.data}
          onConfirm={save}
        />
      </div>
    </Dialog>
  );
}

/** A file's problem found here, before any call: the field it is about and what is wrong. */
interface ReadProblem {
  at: "file" | "text";
  message: string;
}

/** What the catalog answered: what the import does (or would do), and each item's problems. */
interface Preview {
  result: ImportResult;
  /** Problems by item path (`testCases[3]`), each `[field in the item, description]`. */
  problems: Map<string, [string, string][]>;
  /** Problems of the document as a whole (`testCases`: too many). */
  general: string[];
}

/** The document items a refusal's violations name, grouped by item; its preview of the others. */
function previewOfRefusal(error: unknown): Preview | undefined {
  const failure = errorOf(error);
  const [result] = failure.findDetails(ImportContentResponseSchema);
  if (!result) return undefined;
  const problems = new Map<string, [string, string][]>();
  const general: string[] = [];
  for (const { field, description } of failure
    .findDetails(FieldViolationsSchema)
    .flatMap((d) => d.violations)) {
    const item = /^(environments|variables|testCases|testPlans)\[\d+\]/.exec(field)?.[0];
    if (!item) {
      general.push(`${field}: ${description}`);
      continue;
    }
    const list = problems.get(item) ?? [];
    list.push([field.slice(item.length + 1), description]);
    problems.set(item, list);
  }
  return { result, problems, general };
}

export function ImportDialog({ projectId, open, onClose }: DialogProps & { projectId: string }) {
  const queryClient = useQueryClient();
  const importing = useMutation(ConsoleService.method.importContent, { transport: binaryTransport });
  const [file, setFile] = useState<{ name: string; text: string }>();
  const [pasted, setPasted] = useState("");
  const [problem, setProblem] = useState<ReadProblem>();
  const [items, setItems] = useState<ReturnType<typeof importItemsOf>>();
  const [preview, setPreview] = useState<Preview>();
  const [applied, setApplied] = useState<ImportResult>();
  const fileInput = useRef<HTMLInputElement>(null);
  const outcome = useRef<HTMLDivElement>(null);
  // Each new answer is read out and reached from the keyboard at once.
  useEffect(() => {
    if (preview || applied) outcome.current?.focus();
  }, [preview, applied]);

  const reset = () => {
    setFile(undefined);
    setPasted("");
    setProblem(undefined);
    setItems(undefined);
    setPreview(undefined);
    setApplied(undefined);
    importing.reset();
  };
  const close = () => {
    reset();
    onClose();
  };

  const chooseFile = async (chosen: File | undefined) => {
    setProblem(undefined);
    importing.reset();
    if (!chosen) return setFile(undefined);
    if (chosen.size > maxFileBytes) {
      setFile(undefined);
      return setProblem({
        at: "file",
        message: `${chosen.name} is ${mib(chosen.size)}: an import takes at most ${mib(maxImportBytes)} of test cases and plans. Split it into several files.`,
      });
    }
    setFile({ name: chosen.name, text: await chosen.text() });
  };

  /** Calls the catalog with the items: a dry run (the preview) or the import itself. */
  const send = (next: ReturnType<typeof importItemsOf>, dryRun: boolean) =>
    importing.mutate(
      { projectId, ...next, dryRun },
      {
        onSuccess: async (answer) => {
          const result = answer.result ?? create(ImportContentResponseSchema);
          if (dryRun) return setPreview({ result, problems: new Map(), general: [] });
          setPreview(undefined);
          setApplied(result);
          await queryClient.invalidateQueries();
        },
        onError: (error) => {
          const refused = previewOfRefusal(error);
          if (refused) setPreview(refused);
        },
      },
    );

  const previewFile = (event: FormEvent) => {
    event.preventDefault();
    importing.reset();
    setProblem(undefined);
    const at = file ? "file" : "text";
    const text = file?.text ?? pasted;
    if (!text.trim()) {
      setProblem({ at: "file", message: "Choose a file, or paste a document below." });
      fileInput.current?.focus();
      return;
    }
    let read: ReturnType<typeof importItemsOf>;
    try {
      read = importItemsOf(readContentDocument(text, file ? formatOfFileName(file.name) : "yaml"));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return setProblem({ at, message: error.message });
    }
    const bytes = binaryBytes(
      ImportContentRequestSchema,
      create(ImportContentRequestSchema, { projectId, ...read }),
    );
    if (bytes > maxImportBytes)
      return setProblem({
        at,
        message: `Its test cases and plans come to ${mib(bytes)}: an import takes at most ${mib(maxImportBytes)}. Split it into several files.`,
      });
    setItems(read);
    send(read, true);
  };

  const title = applied ? "Imported" : preview ? "Preview of the import" : "Import test cases and plans";
  return (
    <Dialog title={title} open={open} onClose={close} wide={preview !== undefined}>
      {applied ? (
        <div className="stack">
          <div ref={outcome} tabIndex={-1} className="notice notice-info" role="status">
            {appliedSummary(applied)}
          </div>
          <VariablesToSet result={applied} projectId={projectId} onFollow={close} />
          <DialogActions
            onCancel={reset}
            cancelLabel="Import another file"
            label="Close"
            busyLabel=""
            busy={false}
            onConfirm={close}
          />
        </div>
      ) : preview ? (
        <PreviewOf
          preview={preview}
          projectId={projectId}
          outcome={outcome}
          applying={importing.isPending}
          error={previewOfRefusal(importing.error) ? undefined : importing.error}
          onBack={() => {
            setPreview(undefined);
            importing.reset();
          }}
          onApply={() => items && send(items, false)}
        />
      ) : (
        <form className="stack" onSubmit={previewFile} noValidate>
          <p>
            A content document as <strong>Export</strong> writes it (YAML or JSON), from this project or
            another. Its test cases and plans are matched to the project's by id, else by name (by name alone
            when the file comes from another project), its environments and variables by name: you see what
            would be created, changed and left alone before anything is.
          </p>
          <Field
            label="File"
            hint=".yaml, .yml or .json"
            error={problem?.at === "file" ? problem.message : undefined}
          >
            {(control) => (
              <input
                {...control}
                ref={fileInput}
                className="input"
                type="file"
                accept=".yaml,.yml,.json,application/json,application/yaml,text/yaml"
                onChange={(e) => void chooseFile(e.target.files?.[0])}
              />
            )}
          </Field>
          <Field
            label="Or paste the document"
            optional
            hint={file ? `The chosen file, ${file.name}, is read instead.` : "YAML, or JSON."}
            error={problem?.at === "text" ? problem.message : undefined}
          >
            {(control) => (
              <textarea
                {...control}
                className="input input-code"
                rows={6}
                spellCheck={false}
                disabled={file !== undefined}
                value={pasted}
                onChange={(e) => {
                  setProblem(undefined);
                  setPasted(e.target.value);
                }}
              />
            )}
          </Field>
          <ErrorNotice error={importing.error} />
          <DialogActions onCancel={close} label="Preview" busyLabel="Checking…" busy={importing.isPending} />
        </form>
      )}
    </Dialog>
  );
}

const outcomeBadge: Record<ItemOutcome, ReactNode> = {
  [ItemOutcome.UNSPECIFIED]: <Badge tone="bad">Problem</Badge>,
  [ItemOutcome.CREATED]: <Badge tone="good">New</Badge>,
  [ItemOutcome.CHANGED]: <Badge tone="active">Changed</Badge>,
  [ItemOutcome.UNCHANGED]: <Badge tone="neutral">Unchanged</Badge>,
};

interface Row extends ImportedItem {
  kind: string;
}

/**
 * The project's variables without a value as the import leaves them: tests naming them fail until
 * each is set, on the Variables page (values never come in a file).
 */
function VariablesToSet({
  result,
  projectId,
  onFollow,
}: {
  result: ImportResult;
  projectId: string;
  onFollow?: () => void;
}) {
  const names = result.variablesWithoutValue;
  if (names.length === 0) return null;
  const one = names.length === 1;
  return (
    <p className="notice notice-warning break" role="note">
      {one ? "1 variable has" : `${count(names.length)} variables have`} no value
      {result.applied ? " yet" : " after this import"}:{" "}
      {names.map((name, index) => (
        <span key={name}>
          {index > 0 && ", "}
          <code>{name}</code>
        </span>
      ))}
      . A file carries names only: steps naming {one ? "it" : "them"} fail until {one ? "it is" : "they are"}{" "}
      set.{" "}
      {result.applied && (
        <Link to={`/projects/${projectId}/variables`} onClick={onFollow}>
          Set {one ? "its value" : "their values"} on the Variables page
        </Link>
      )}
    </p>
  );
}

const kindOf = {
  environments: "Environment",
  variables: "Variable",
  testCases: "Test case",
  testPlans: "Test plan",
} as const;

/** The result's items, in document order: environments, variables, test cases, test plans. */
const rowsOf = (result: ImportResult): Row[] =>
  (Object.keys(kindOf) as (keyof typeof kindOf)[]).flatMap((key) =>
    result[key].map((i) => ({ ...i, kind: kindOf[key] })),
  );

function PreviewOf({
  preview,
  projectId,
  outcome,
  applying,
  error,
  onBack,
  onApply,
}: {
  preview: Preview;
  projectId: string;
  outcome: RefObject<HTMLDivElement | null>;
  applying: boolean;
  error: unknown;
  onBack: () => void;
  onApply: () => void;
}) {
  const { result, problems, general } = preview;
  const rows = rowsOf(result);
  const bad = rows.filter((row) => problems.has(row.path));
  const attention = rows.filter((row) => row.outcome !== ItemOutcome.UNCHANGED || problems.has(row.path));
  const unchanged = rows.filter((row) => row.outcome === ItemOutcome.UNCHANGED && !problems.has(row.path));
  const refused = bad.length > 0 || general.length > 0;
  const nothingToDo = !refused && attention.length === 0;
  const table = (shown: Row[]) => (
    <DataTable
      rows={shown.map((row) => ({ ...row, id: row.path }))}
      columns={[
        {
          label: "Item",
          cell: (row) => (
            <span className="cell-lines">
              {row.kind}
              <code className="muted small">{row.path}</code>
            </span>
          ),
        },
        {
          label: "Name",
          className: "cell-strong",
          cell: (row) => row.name || <span className="muted">—</span>,
        },
        {
          label: "Result",
          className: "cell-result",
          cell: (row) => (
            <span className="import-result">
              {outcomeBadge[row.outcome]}
              {row.outcome === ItemOutcome.CHANGED && (
                <span className="small">{row.changedFields.join(", ")}</span>
              )}
              {row.kind === kindOf.variables && row.outcome === ItemOutcome.CREATED && (
                <span className="small">without a value</span>
              )}
              {problems.has(row.path) && (
                <ul className="import-problems" aria-label={`Problems of ${row.path}`}>
                  {problems.get(row.path)?.map(([field, description]) => (
                    <li key={`${field}: ${description}`}>
                      {field && <code>{field}</code>} {description}
                    </li>
                  ))}
                </ul>
              )}
            </span>
          ),
        },
      ]}
    />
  );
  return (
    <div className="stack">
      {result.fromOtherProject && (
        <p className="notice notice-info">
          This file comes from another project: its ids name that project's items, so its test cases and plans
          are matched to this project's by name, and created where none has the name.
        </p>
      )}
      <div
        ref={outcome}
        tabIndex={-1}
        className={`notice ${refused ? "notice-error" : "notice-info"}`}
        role={refused ? "alert" : "status"}
      >
        {refused ? (
          <>
            {bad.length > 0 &&
              `${plural(bad.length, "item has", "items have")} problems, listed with each below. `}
            {general.map((text) => (
              <span key={text}>{text}. </span>
            ))}
            Fix the file and preview it again: nothing is imported while any item has a problem.
          </>
        ) : nothingToDo ? (
          "Everything in the file is already in the project: there is nothing to import."
        ) : (
          previewSummary(result)
        )}
      </div>
      {attention.length > 0 && <div className="import-preview">{table(attention)}</div>}
      {unchanged.length > 0 && (
        <details className="import-unchanged" open={attention.length === 0}>
          <summary>{plural(unchanged.length, "item")} already as in the file, left alone</summary>
          <div className="import-preview">{table(unchanged)}</div>
        </details>
      )}
      {(result.otherTestCases > 0 || result.otherTestPlans > 0) && (
        <p className="muted small">{othersSentence(result)}</p>
      )}
      {!refused && <VariablesToSet result={result} projectId={projectId} />}
      <ErrorNotice error={error} />
      <DialogActions
        onCancel={onBack}
        cancelLabel="Choose another file"
        label="Apply"
        busyLabel="Applying…"
        busy={applying}
        disabled={refused || nothingToDo}
        onConfirm={onApply}
      />
    </div>
  );
}

const what = {
  environments: "environment",
  variables: "variable",
  testCases: "test case",
  testPlans: "test plan",
} as const;

/** "3 test cases", "1 test plan" by outcome, for the sentences below. */
function counted(result: ImportResult, outcome: ItemOutcome): string[] {
  return (Object.keys(what) as (keyof typeof what)[]).flatMap((key) => {
    const n = result[key].filter((i) => i.outcome === outcome).length;
    return n > 0 ? [plural(n, what[key])] : [];
  });
}

/** "a", "a and b", "a, b and c". */
const joined = (parts: string[]) =>
  parts.length <= 2 ? parts.join(" and ") : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;

/** "1 test case and 2 test plans", "as it is" / "as they are": the items of an outcome. */
function itemsOf(result: ImportResult, outcome: ItemOutcome): { text: string; one: boolean } {
  const total = rowsOf(result).filter((i) => i.outcome === outcome).length;
  return { text: joined(counted(result, outcome)), one: total === 1 };
}

function previewSummary(result: ImportResult): string {
  const created = itemsOf(result, ItemOutcome.CREATED);
  const changed = itemsOf(result, ItemOutcome.CHANGED);
  const unchanged = itemsOf(result, ItemOutcome.UNCHANGED);
  const acts = [created.text && `creates ${created.text}`, changed.text && `changes ${changed.text}`].filter(
    Boolean,
  );
  const left = unchanged.text
    ? `, and leaves ${unchanged.text} as ${unchanged.one ? "it is" : "they are"}`
    : "";
  return `Applying ${acts.join(" and ")}${left}.`;
}

/** What the document does not hold: an import never deletes it. */
function othersSentence(result: ImportResult): string {
  const parts = [
    result.otherTestCases > 0 && plural(result.otherTestCases, "other test case"),
    result.otherTestPlans > 0 && plural(result.otherTestPlans, "other test plan"),
  ].filter((part): part is string => part !== false);
  const one = result.otherTestCases + result.otherTestPlans === 1;
  return `${joined(parts)} of the project ${one ? "is" : "are"} not in the file: an import never deletes, so ${one ? "it stays as it is" : "they stay as they are"}.`;
}

function appliedSummary(result: ImportResult): string {
  const created = counted(result, ItemOutcome.CREATED);
  const changed = counted(result, ItemOutcome.CHANGED);
  const unchanged = rowsOf(result).filter((i) => i.outcome === ItemOutcome.UNCHANGED).length;
  return [
    created.length > 0 && `Created ${joined(created)}.`,
    changed.length > 0 && `Changed ${joined(changed)}.`,
    unchanged > 0 &&
      `${count(unchanged)} ${unchanged === 1 ? "item was" : "items were"} already as in the file.`,
  ]
    .filter(Boolean)
    .join(" ");
}
