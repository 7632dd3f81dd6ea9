// The project a page is about (the :projectId of its path), its name and the person's role there.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useParams } from "react-router";
import { canEdit } from "./format";

export function useProject() {
  const { projectId = "" } = useParams();
  const project = useQuery(ConsoleService.method.getProject, { projectId });
  return {
    projectId,
    project,
    name: project.data?.project?.name ?? "Project",
    /** Editor and above: start and cancel runs, set variable values, manage keys. */
    editor: project.data ? canEdit(project.data.role) : false,
    /** Links inside the project: `path("/runs")`. */
    path: (rest = "") => `/projects/${projectId}${rest}`,
  };
}
