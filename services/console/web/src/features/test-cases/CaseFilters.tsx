// The list's filters: a search in the names and a tag, both kept in the URL by the page.
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";

export function CaseFilters({
  search,
  tag,
  every,
  onChange,
}: {
  search: string;
  tag: string;
  /** Every case of the project, for the tags to filter by. */
  every: TestCase[] | undefined;
  onChange: (key: "q" | "tag", value: string) => void;
}) {
  const tags = [
    ...new Map((every ?? []).flatMap((c) => c.tags).map((t) => [t.toLowerCase(), t] as const)).values(),
  ].sort((a, b) => a.localeCompare(b));
  return (
    <search className="filters" aria-label="Filter test cases">
      <label className="field filters-grow">
        <span>Search</span>
        <input
          className="input"
          type="search"
          placeholder="Name contains…"
          value={search}
          onChange={(e) => onChange("q", e.target.value)}
        />
      </label>
      <label className="field">
        <span>Tag</span>
        <select className="input" value={tag} onChange={(e) => onChange("tag", e.target.value)}>
          <option value="">Any tag</option>
          {tags.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
          {tag && !tags.some((t) => t.toLowerCase() === tag.toLowerCase()) && (
            <option value={tag}>{tag}</option>
          )}
        </select>
      </label>
    </search>
  );
}
