// Beside the steps' heading in the test case editor: the project's variables a step can use.
import { Link } from "react-router";

/** The names steps can use as `{{NAME}}`: the project's variables (values never shown). */
export function KnownNames({
  projectId,
  names,
  failed,
}: {
  projectId: string;
  names: string[] | undefined;
  failed: boolean;
}) {
  if (failed)
    return (
      <p className="muted small known-names">
        The project's variables could not be read: <code>{"{{NAME}}"}</code> references are not checked.
      </p>
    );
  if (names === undefined) return null;
  return (
    <p className="muted small known-names">
      {names.length === 0 ? "No project variables yet" : "Project variables: "}
      {names.map((name, i) => (
        <span key={name}>
          {i > 0 && " "}
          <code>{`{{${name}}}`}</code>
        </span>
      ))}
      {" · "}
      <Link to={`/projects/${projectId}/variables`}>Variables</Link>
    </p>
  );
}
