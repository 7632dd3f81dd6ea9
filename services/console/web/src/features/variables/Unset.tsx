import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";

/**
 * The variables without a value (created by an import, which carries names only): steps naming
 * them fail until they have one.
 */
export function Unset({ variables, editor }: { variables: readonly Variable[]; editor: boolean }) {
  const unset = variables.filter((variable) => !variable.hasValue);
  if (unset.length === 0) return null;
  const one = unset.length === 1;
  return (
    <p className="notice notice-warning break" role="note">
      {one ? "1 variable has" : `${unset.length} variables have`} no value yet:{" "}
      {unset.map((variable, index) => (
        <span key={variable.id}>
          {index > 0 && ", "}
          <code>{variable.name}</code>
        </span>
      ))}
      . Steps naming {one ? "it" : "them"} fail until {one ? "it is" : "they are"} set
      {editor ? ": use Set value in each one's row." : " by an Editor."}
    </p>
  );
}
