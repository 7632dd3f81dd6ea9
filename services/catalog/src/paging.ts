import { invalid } from "./errors.js";

// Pages of organizations, members and projects, oldest first. A page token is the position of the
// last item of the previous page, (created_at, id), so pages stay right while items are added.

export interface Page {
  /** How many items to read: one more than the page holds, to tell whether another follows. */
  limit: number;
  size: number;
  /** Keyset condition on (created_at, id) of `alias`, and its parameters; empty for the first page. */
  after: { where: string; params: unknown[] };
}

export function readPage(pageSize: number, pageToken: string, alias: string): Page {
  if (pageSize < 0) throw invalid("page_size must not be negative");
  const size = pageSize === 0 ? 100 : Math.min(pageSize, 1000);
  if (!pageToken) return { limit: size + 1, size, after: { where: "true", params: [] } };
  const match = /^(\d{1,15})\.([a-z]{1,4}_[0-9a-z]{26})$/.exec(
    Buffer.from(pageToken, "base64url").toString("utf8"),
  );
  if (!match) throw invalid("page_token is not valid (pass next_page_token of the previous page)");
  return {
    limit: size + 1,
    size,
    after: {
      where: `(${alias}.created_at, ${alias}.id) > (?::timestamptz, ?)`,
      params: [new Date(Number(match[1])).toISOString(), match[2]],
    },
  };
}

/** The page's items and the token of the next page ("" when this is the last). */
export function pageOf<T extends { id: string; created_at: Date }>(
  rows: T[],
  page: Page,
): { items: T[]; nextPageToken: string } {
  const items = rows.slice(0, page.size);
  const last = items.at(-1);
  const more = rows.length > page.size && last;
  return {
    items,
    nextPageToken: more
      ? Buffer.from(`${last.created_at.getTime()}.${last.id}`, "utf8").toString("base64url")
      : "",
  };
}
