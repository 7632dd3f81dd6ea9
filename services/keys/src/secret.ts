import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

// The shape of an API key secret (docs/keys.md, "Format and storage"):
//
//   trk_ <40 random base62 characters> <6-character base62 checksum>
//
// A content token's is the same after `trc_` instead: a scanner, a log reader or a person tells
// the two apart at a glance, and neither verification accepts the other's prefix.
//
// The checksum is the CRC32 of the 40 random characters, written in base62 and left-padded with
// "0" to 6 characters (62^6 > 2^32, so every CRC32 fits). It lets secret scanners recognise a
// leaked key offline, and lets us refuse a mistyped or made-up secret without a database lookup.

export const secretPrefix = "trk_";
/** A content token's prefix (docs/keys.md, "Content tokens"): same length, so the same bounds hold. */
export const contentTokenPrefix = "trc_";
export type SecretPrefix = typeof secretPrefix | typeof contentTokenPrefix;
export const randomLength = 40;
export const checksumLength = 6;
export const secretLength = secretPrefix.length + randomLength + checksumLength;
/** How much of the secret may be shown again: `trk_` and the first 8 random characters. */
export const displayPrefixLength = 12;

/** Digits first, then upper case, then lower case: the value of a character is its index here. */
export const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const secretPattern = new RegExp(`^[0-9A-Za-z]{${randomLength + checksumLength}}$`);

/** `value` (a non-negative integer below 2^53) in base62, left-padded with "0" to `width`. */
export function base62(value: number, width: number): string {
  let digits = "";
  let rest = value;
  do {
    digits = base62Alphabet[rest % 62] + digits;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return digits.padStart(width, "0");
}

/** The 6-character checksum of a secret's random part. */
export function checksumOf(randomPart: string): string {
  return base62(crc32(randomPart), checksumLength);
}

/** `length` uniformly random base62 characters from the system's CSPRNG. */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes above it are dropped so that every character is equally likely.
      if (byte < 248 && out.length < length) out += base62Alphabet[byte % 62];
    }
  }
  return out;
}

/** A new secret. It is shown once and never stored: only its fingerprint is. */
export function generateSecret(prefix: SecretPrefix = secretPrefix): string {
  const random = randomBase62(randomLength);
  return `${prefix}${random}${checksumOf(random)}`;
}

/**
 * Whether a presented string has the shape of a secret we could have issued: the prefix, the
 * length, base62 characters and a matching checksum. Anything else is an unknown key, and is
 * refused without looking anything up.
 */
export function isWellFormedSecret(candidate: string, prefix: SecretPrefix = secretPrefix): boolean {
  if (candidate.length !== secretLength || !candidate.startsWith(prefix)) return false;
  if (!secretPattern.test(candidate.slice(prefix.length))) return false;
  const random = candidate.slice(secretPrefix.length, secretPrefix.length + randomLength);
  return candidate.slice(secretPrefix.length + randomLength) === checksumOf(random);
}

/** What may be shown of a secret after creation: its first 12 characters. */
export function displayPrefixOf(secret: string): string {
  return secret.slice(0, displayPrefixLength);
}
