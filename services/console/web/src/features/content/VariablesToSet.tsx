import type { ImportContentResponse as ImportResult } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { Link } from "react-router";
import { count } from "../../format";

/**
 * The project's variables without a value as the import leaves them: tests naming them fail until
 * each is set, on the Variables page (values never come in a file).
 */
export function VariablesToSet({
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
