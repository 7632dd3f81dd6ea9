// A test case's tags, each a link to the test cases with that tag.
import { Link } from "react-router";
import { useProject } from "../../project";

export function Tags({ tags }: { tags: string[] }) {
  const { path } = useProject();
  if (tags.length === 0) return <span className="muted">—</span>;
  return (
    <span className="tags">
      {tags.map((tag) => (
        <Link key={tag} className="tag" to={path(`/test-cases?tag=${encodeURIComponent(tag)}`)}>
          {tag}
        </Link>
      ))}
    </span>
  );
}
