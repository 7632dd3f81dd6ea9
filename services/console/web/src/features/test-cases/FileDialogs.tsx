// The test case list's Export and Import dialogs, mounted once first opened and then kept (closing
// hands focus back to the button). The file format's reader and writer (with a YAML library) load
// when a dialog first opens.
import { lazy, Suspense } from "react";
import { Loading } from "../../components/States";

const ExportDialog = lazy(() =>
  import("../content/ExportDialog").then((module) => ({ default: module.ExportDialog })),
);
const ImportDialog = lazy(() =>
  import("../content/ImportDialog").then((module) => ({ default: module.ImportDialog })),
);

export type FileDialog = "export" | "import";

export function FileDialogs({
  projectId,
  projectName,
  opened,
  open,
  editor,
  onClose,
}: {
  projectId: string;
  projectName: string;
  /** The dialogs opened so far: mounted from then on. */
  opened: Set<FileDialog>;
  open: FileDialog | undefined;
  editor: boolean;
  onClose: () => void;
}) {
  return (
    <Suspense fallback={<Loading what="the dialog" />}>
      {opened.has("export") && (
        <ExportDialog
          projectId={projectId}
          projectName={projectName}
          open={open === "export"}
          onClose={onClose}
        />
      )}
      {opened.has("import") && editor && (
        <ImportDialog projectId={projectId} open={open === "import"} onClose={onClose} />
      )}
    </Suspense>
  );
}
