import { domainToASCII } from "node:url";
import { stepMaxMs } from "@testrun/content-file";
import type { Violations } from "./errors.js";

// Field rules shared by the catalog's writes (catalog.proto). Each checker adds what is wrong to
// `violations` under the field's path and returns the value as it is to be stored.

/** Lengths are counted in Unicode code points, as the protos say (and as char_length does). */
export const codePoints = (text: string) => [...text].length;

/**
 * Whether text holds a C0 or C1 control character (line breaks and tabs included). NUL cannot be
 * stored in PostgreSQL text, and none of them has a place in a name.
 */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** The longest name of a test case, plan, project... (what checkName takes by default). */
export const maxNameLength = 200;

/** A name: trimmed, 1 to `max` characters, no control characters. */
export function checkName(value: string, field: string, violations: Violations, max = maxNameLength): string {
  const name = value.trim();
  if (name.length === 0) violations.add(field, "is required");
  else if (codePoints(name) > max) violations.add(field, `must be at most ${max} characters`);
  else if (hasControlCharacters(name)) violations.add(field, "must not contain control characters");
  return name;
}

/** Free text of at most 2000 characters; may be empty; kept as given. */
export function checkDescription(value: string, field: string, violations: Violations): string {
  if (codePoints(value) > 2000) violations.add(field, "must be at most 2000 characters");
  else if (value.includes(String.fromCharCode(0))) violations.add(field, "must not contain NUL characters");
  return value;
}

/**
 * An email address in its one stored form (docs/security.md, "Sign-in"): trimmed, NFKC-normalised,
 * then lower-cased, and its domain (after the last "@") mapped to ASCII by IDNA (UTS #46, node's
 * domainToASCII: "corp\u3002example" is "corp.example", "b\u00fccher.example" is
 * "xn--bcher-kva.example"), so that lookalikes (U+212A KELVIN SIGN for "k", fullwidth letters,
 * ideographic full stops) and letter case never make two addresses of one person. Every comparison
 * of emails is an exact comparison of this form, never PostgreSQL's lower(), whose folding depends
 * on the database's locale. A domain IDNA does not map is left as folded (checkEmail refuses it).
 */
export function normalizeEmail(value: string): string {
  const folded = value.trim().normalize("NFKC").toLowerCase();
  const at = folded.lastIndexOf("@");
  const domain = at < 0 ? "" : asciiDomain(folded.slice(at + 1));
  return domain ? `${folded.slice(0, at)}@${domain}` : folded;
}

/** URL syntax domainToASCII would act on ("a/b" is host "a", "%41" is "a"): no domain has it. */
const urlSyntax = /[/\\?#%:@[\]\s]/u;

/** A domain's ASCII form by IDNA, or "" when it has none. */
function asciiDomain(domain: string): string {
  return urlSyntax.test(domain) ? "" : domainToASCII(domain);
}

const implausibleInEmail = /[\p{Cc}\p{Cf}\p{Z}\s]/u;

/**
 * An email in its stored form (normalizeEmail). What does not normalise to a plausible address is
 * refused: one "@", something on each side, no spaces, control or invisible format characters, a
 * domain IDNA maps to ASCII; at most 320 characters.
 */
export function checkEmail(value: string, field: string, violations: Violations): string {
  const email = normalizeEmail(value);
  if (email.length === 0) violations.add(field, "is required");
  else if (codePoints(email) > 320) violations.add(field, "must be at most 320 characters");
  else if (!/^[^@]+@[^@]+$/.test(email) || implausibleInEmail.test(email))
    violations.add(field, "must be an email address like ann@example.com");
  else if (!asciiDomain(email.slice(email.indexOf("@") + 1)))
    violations.add(field, "must have a domain name (one that IDNA maps to ASCII)");
  return email;
}

/**
 * An environment's base URL: an absolute http:// or https:// URL without user name, password, query
 * or fragment, at most 2048 characters; stored without trailing slashes (step paths start with "/").
 */
export function checkBaseUrl(value: string, field: string, violations: Violations): string {
  const text = value.trim();
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (text.length === 0) violations.add(field, "is required");
  else if (codePoints(text) > 2048) violations.add(field, "must be at most 2048 characters");
  else if (!url || !/^https?:\/\//i.test(text) || !url.hostname)
    violations.add(field, "must be an absolute http:// or https:// URL");
  else if (/\s/.test(text) || hasControlCharacters(text))
    violations.add(field, "must not contain spaces or control characters");
  else if (url.username || url.password || /^[a-z]+:\/\/[^/]*@/i.test(text))
    // Anyone who can read the project (Viewers, API keys) sees the base URL; a secret is a variable.
    violations.add(
      field,
      "must not carry a user name or password (user:pass@host): keep credentials in variables and send them in a step's headers",
    );
  else if (url.search || text.includes("?")) violations.add(field, "must not have a query string");
  else if (url.hash || text.includes("#")) violations.add(field, "must not have a fragment");
  return text.replace(/\/+$/, "");
}

/**
 * Tags: each 1 to 64 characters after trimming, without control characters; duplicates (ignoring
 * case) dropped keeping the first; at most 50. Stored trimmed, in the letter case given.
 */
export function checkTags(values: readonly string[], field: string, violations: Violations): string[] {
  const tags: string[] = [];
  const seen = new Set<string>();
  values.forEach((value, index) => {
    const tag = value.trim();
    const at = `${field}[${index}]`;
    if (tag.length === 0) violations.add(at, "must not be empty");
    else if (codePoints(tag) > 64) violations.add(at, "must be at most 64 characters");
    else if (hasControlCharacters(tag)) violations.add(at, "must not contain control characters");
    else if (!seen.has(tag.toLowerCase())) {
      seen.add(tag.toLowerCase());
      tags.push(tag);
    }
  });
  if (tags.length > 50) violations.add(field, `must hold at most 50 distinct tags (got ${tags.length})`);
  return tags;
}

/** The longest a step may take, or wait, in milliseconds (step.proto's `timeout_ms` fields). */
const maxMs = stepMaxMs;

/** A step's time in milliseconds: 0 (meaning `zeroMeans`) or 1 to 120000. */
export function checkMs(value: number, field: string, violations: Violations, zeroMeans: string): void {
  if (value < 0 || value > maxMs) violations.add(field, `must be 0 (${zeroMeans}) or 1 to ${maxMs}`);
}

/** The most retries of a failed attempt a test case, plan or run may ask for. */
export const maxRetries = 3;

/** A retry count (TestCase.retries, TestPlan.retries): a whole number, 0 to 3. */
export function checkRetries(value: number, field: string, violations: Violations): number {
  if (!Number.isInteger(value) || value < 0 || value > maxRetries)
    violations.add(
      field,
      `must be 0 to ${maxRetries}, how many times a failed attempt is run again (got ${value})`,
    );
  return value;
}

/** Names of variables and of values saved by steps, as written in `{{NAME}}`. */
export const variableNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function checkVariableName(value: string, field: string, violations: Violations): string {
  if (!variableNamePattern.test(value))
    violations.add(
      field,
      "must start with a letter or underscore and hold only letters, digits and underscores (at most 64)",
    );
  return value;
}
