// A Viewer who opened a plan editor's address: what they may do instead.
import { Link } from "react-router";

export function ReadOnly({ back, to }: { back: string; to: string }) {
  return (
    <section className="narrow-page" aria-labelledby="read-only-title">
      <h1 id="read-only-title">Viewers cannot change test plans</h1>
      <p>Editors and above create and change them; ask one of them, or an admin for the Editor role.</p>
      <p>
        <Link to={back}>Back to {to}</Link>
      </p>
    </section>
  );
}
