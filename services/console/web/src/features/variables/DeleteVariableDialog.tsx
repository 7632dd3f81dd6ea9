import { useMutation, useQuery } from "@connectrpc/connect-query";
import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link } from "react-router";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { QueryView } from "../../components/States";
import { useInvalidate } from "../../components/useInvalidate";
import { plural } from "../../format";

/**
 * Lists the test cases naming the variable before it goes (their steps then fail at run time).
 * Not the list-page DeleteDialog: it waits for the uses before it lets the delete go.
 */
export function DeleteVariableDialog({
  projectId,
  variable,
  onClose,
  onDeleted,
}: {
  projectId: string;
  variable: Variable;
  onClose: () => void;
  onDeleted: (name: string) => void;
}) {
  const invalidate = useInvalidate();
  const uses = useQuery(ConsoleService.method.listVariableUses, { projectId, variableId: variable.id });
  const remove = useMutation(ConsoleService.method.deleteVariable);
  const reference = `{{${variable.name}}}`;
  return (
    <Dialog title={`Delete ${variable.name}?`} open onClose={onClose}>
      <div className="stack">
        <QueryView query={uses} what={`where ${variable.name} is used`}>
          {(data) =>
            data.testCases.length === 0 ? (
              <p>
                No test case names <code>{reference}</code>.
              </p>
            ) : (
              <>
                <p className="notice notice-warning">
                  {data.truncated ? "More than " : ""}
                  {plural(data.testCases.length, "test case")} name <code>{reference}</code>. Their steps fail
                  at run time until they are changed or the variable is created again.
                </p>
                <ul className="uses" aria-label={`Test cases using ${variable.name}`}>
                  {data.testCases.map((testCase) => (
                    <li key={testCase.id}>
                      <Link to={`/projects/${projectId}/test-cases/${testCase.id}`}>{testCase.name}</Link>
                      {!testCase.enabled && <span className="muted"> (disabled)</span>}
                    </li>
                  ))}
                </ul>
              </>
            )
          }
        </QueryView>
        <p>Its value is deleted for good.</p>
        <ErrorNotice error={remove.error} />
        <DialogActions
          onCancel={onClose}
          label="Delete variable"
          busyLabel="Deleting…"
          busy={remove.isPending}
          disabled={uses.isPending}
          danger
          onConfirm={() =>
            remove.mutate(
              { projectId, variableId: variable.id },
              {
                onSuccess: async () => {
                  await invalidate(
                    ConsoleService.method.listVariables,
                    ConsoleService.method.listVariableUses,
                  );
                  onDeleted(variable.name);
                  onClose();
                },
              },
            )
          }
        />
      </div>
    </Dialog>
  );
}
