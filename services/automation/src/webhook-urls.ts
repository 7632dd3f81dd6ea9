import type { Orm } from "@testrun/kit";
import type { SecretCipher } from "./secrets.js";

// Webhook URLs at rest and on the way out (docs/automation.md, "URLs at rest"; docs/security.md):
// a URL may be a credential (a Slack incoming webhook's is), so it is stored sealed like the
// signing secret, opened only to deliver and for readers who manage webhooks (EDITOR and above);
// other readers see its origin. Nothing the service writes for people (delivery errors, logs)
// quotes it.

/** The URL's origin (`https://hooks.slack.com`), "" when it is no URL. */
export const urlOrigin = (url: string): string => {
  const origin = URL.parse(url)?.origin;
  return origin && origin !== "null" ? origin : "";
};

/** What a reader below EDITOR sees of a URL: its origin and an ellipsis. */
export const originOnly = (origin: string): string => `${origin || "https://…"}/…`;

/** The columns a URL is stored in. */
export const sealedUrl = (cipher: SecretCipher, webhookId: string, url: string) => ({
  urlSealed: cipher.seal(url, webhookId, "url"),
  urlOrigin: urlOrigin(url),
});

/** A stored webhook's URL: opened (or, on a row not sealed yet, as it was written). */
export function openUrl(
  cipher: SecretCipher,
  webhookId: string,
  row: { url: string | null; url_sealed: string | null },
): string {
  return row.url_sealed ? cipher.open(row.url_sealed, webhookId, "url") : (row.url ?? "");
}

/**
 * `text` with the URL put as `[url]`: whole, its path and query, and the parts of those long
 * enough to be a token (a query value of 8 characters or more, a path segment of 16 or more), for
 * a receiver's answer that echoes any of them.
 */
export function withoutUrl(text: string, url: string): string {
  const parsed = URL.parse(url);
  const parts = [url];
  if (parsed) {
    parts.push(parsed.pathname + parsed.search, parsed.pathname, parsed.search);
    for (const value of parsed.searchParams.values()) if (value.length >= 8) parts.push(value);
    for (const segment of parsed.pathname.split("/")) if (segment.length >= 16) parts.push(segment);
  }
  return parts
    .filter((part) => part.length > 1)
    .sort((a, b) => b.length - a.length)
    .reduce((left, secret) => left.split(secret).join("[url]"), text);
}

/**
 * Seals every URL still stored plain: rows made before URLs were sealed, and rows an older
 * replica writes during an upgrade. Each row only if its URL is still the one read (a change
 * meanwhile is sealed by whoever made it). Answers how many it sealed.
 */
export async function sealPlainUrls(orm: Orm, cipher: SecretCipher): Promise<number> {
  const em = orm.em.fork();
  const rows = await em.execute<{ id: string; url: string }[]>(
    "select id, url from automation.webhooks where url is not null limit 1000",
  );
  for (const row of rows) {
    const sealed = sealedUrl(cipher, row.id, row.url);
    await em.execute(
      "update automation.webhooks set url_sealed = ?, url_origin = ?, url = null where id = ? and url = ?",
      [sealed.urlSealed, sealed.urlOrigin, row.id, row.url],
    );
  }
  return rows.length;
}
