// `?version=N` names a version that is not kept (or is not a version): say so, link the current one.
import { Link } from "react-router";

export function VersionMissing({ message, current }: { message: string; current: string }) {
  return (
    <section className="narrow-page" aria-labelledby="version-missing-title">
      <h1 id="version-missing-title">Version not available</h1>
      <p>{message}</p>
      <p>
        <Link to={current}>Go to the current version</Link>
      </p>
    </section>
  );
}
