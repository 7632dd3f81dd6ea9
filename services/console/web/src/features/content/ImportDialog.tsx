// A project's test cases and plans, environments and variable names as one file (docs/console.md,
// "Test cases as files"): Export writes the content document and downloads it; Import reads one,
// previews what it would create, change and leave alone, item by item with each item's problems,
// and applies it all or nothing, then names the variables still without a value. The file is read
// and written here, with the reader and writer testrunctl uses (@testrun/content-file); the
// catalog checks and matches the items (ImportContent).
import { create } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { formatOfFileName, InputError, importItemsOf, readContentDocument } from "@testrun/content-file";
import {
  ImportContentResponseSchema,
  type ImportContentResponse as ImportResult,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService, ImportContentRequestSchema } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { binaryTransport } from "../../api";
import { binaryBytes } from "../../catalog-bound";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { TextAreaField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";
import {
  appliedSummary,
  maxFileBytes,
  maxImportBytes,
  mib,
  type Preview,
  previewOfRefusal,
  type ReadProblem,
} from "./import-model";
import { PreviewOf } from "./PreviewOf";
import { VariablesToSet } from "./VariablesToSet";

/** Import: reads a file or pasted text, previews it (a dry run), then applies it all or nothing. */
export function ImportDialog({ projectId, open, onClose }: DialogProps & { projectId: string }) {
  const invalidate = useInvalidate();
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
          // An import may touch every list of the project: all of it is read again.
          await invalidate();
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
          <TextAreaField
            label="Or paste the document"
            optional
            hint={file ? `The chosen file, ${file.name}, is read instead.` : "YAML, or JSON."}
            error={problem?.at === "text" ? problem.message : undefined}
            className="input input-code"
            rows={6}
            spellCheck={false}
            disabled={file !== undefined}
            value={pasted}
            onChange={(value) => {
              setProblem(undefined);
              setPasted(value);
            }}
          />
          <ErrorNotice error={importing.error} />
          <DialogActions onCancel={close} label="Preview" busyLabel="Checking…" busy={importing.isPending} />
        </form>
      )}
    </Dialog>
  );
}
