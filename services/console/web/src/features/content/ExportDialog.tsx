// Export: the project's content document (docs/console.md, "Test cases as files"), written with
// the writer testrunctl uses (@testrun/content-file) and downloaded.
import { useQuery } from "@connectrpc/connect-query";
import { type FileFormat, writeContentDocument } from "@testrun/content-file";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Dialog, DialogActions, type DialogProps } from "../../components/Dialog";
import { FieldSet } from "../../components/Field";
import { QueryView } from "../../components/States";
import { plural } from "../../format";
import { download, exportFileName } from "./file";
import { joined } from "./import-model";

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
