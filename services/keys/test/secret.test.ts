import { crc32 } from "node:zlib";
import { expect } from "chai";
import { keyState, type StoredKey } from "../src/key-state.js";
import {
  base62,
  base62Alphabet,
  checksumOf,
  contentTokenPrefix,
  displayPrefixOf,
  generateSecret,
  isWellFormedSecret,
} from "../src/secret.js";

describe("keys: secret format", () => {
  it("is trk_, 40 random base62 characters and a 6-character base62 CRC32 of them", () => {
    const secret = generateSecret();
    expect(secret).to.match(/^trk_[0-9A-Za-z]{46}$/);
    const random = secret.slice(4, 44);
    expect(secret.slice(44)).to.equal(base62(crc32(random), 6));
    expect(isWellFormedSecret(secret)).to.equal(true);
    expect(displayPrefixOf(secret)).to.equal(secret.slice(0, 12));
  });

  it("never repeats and uses the whole alphabet evenly enough", () => {
    const secrets = Array.from({ length: 2_000 }, generateSecret);
    expect(new Set(secrets).size).to.equal(secrets.length);
    const counts = new Map<string, number>();
    for (const s of secrets) for (const c of s.slice(4, 44)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).to.equal(62);
    // 80,000 characters over 62 symbols: about 1,290 each; a modulo bias would skew some by ~25%.
    for (const count of counts.values()) expect(count).to.be.within(1_100, 1_500);
  });

  it("writes the CRC32 in base62, left-padded with 0 to 6 characters", () => {
    expect(base62(0, 6)).to.equal("000000");
    expect(base62(61, 6)).to.equal("00000z");
    expect(base62(62, 6)).to.equal("000010");
    expect(base62(2 ** 32 - 1, 6)).to.equal("4gfFC3");
    expect(base62Alphabet).to.have.length(62);
    // A random part whose CRC32 is small still gets a 6-character checksum.
    expect(checksumOf("a")).to.have.length(6);
    expect(checksumOf("a")).to.equal(base62(crc32("a"), 6));
  });

  it("detects any single changed character in the random part or the checksum", () => {
    const secret = generateSecret();
    for (let i = 4; i < secret.length; i++) {
      const other = base62Alphabet[(base62Alphabet.indexOf(secret[i] as string) + 1) % 62];
      const changed = `${secret.slice(0, i)}${other}${secret.slice(i + 1)}`;
      expect(isWellFormedSecret(changed), `character ${i} changed`).to.equal(false);
    }
  });

  it("refuses other shapes: prefix, length, alphabet, surrounding space", () => {
    const secret = generateSecret();
    for (const candidate of [
      "",
      "trk_",
      secret.replace("trk_", "trx_"),
      secret.replace("trk_", "TRK_"),
      secret.slice(0, -1),
      `${secret}0`,
      ` ${secret}`,
      `${secret}\n`,
      `${secret.slice(0, 10)}-${secret.slice(11)}`,
      "x".repeat(10_000),
    ]) {
      expect(isWellFormedSecret(candidate), JSON.stringify(candidate.slice(0, 60))).to.equal(false);
    }
  });

  it("gives content tokens their own prefix, and neither prefix passes for the other", () => {
    const token = generateSecret(contentTokenPrefix);
    expect(token).to.match(/^trc_[0-9A-Za-z]{46}$/);
    expect(isWellFormedSecret(token, contentTokenPrefix)).to.equal(true);
    expect(isWellFormedSecret(token)).to.equal(false);
    const key = generateSecret();
    expect(isWellFormedSecret(key, contentTokenPrefix)).to.equal(false);
    // The same random part and checksum under the other prefix is well formed, but as the other kind only.
    expect(isWellFormedSecret(`trc_${key.slice(4)}`, contentTokenPrefix)).to.equal(true);
    expect(isWellFormedSecret(`trc_${key.slice(4)}`)).to.equal(false);
  });
});

describe("keys: key state", () => {
  const created = new Date("2026-11-01T10:00:00.000Z");
  const key = (fields: Partial<StoredKey>): StoredKey => ({
    id: "key_x",
    projectId: "prj_x",
    organizationId: "org_x",
    name: "ci",
    displayPrefix: "trk_12345678",
    fingerprint: "0".repeat(64),
    kind: "api",
    creatorMemberId: "mem_x",
    createdAt: created,
    expiry: "30d",
    expiresAt: new Date("2026-12-01T10:00:00.000Z"),
    lastUsedAt: null,
    revokedAt: null,
    disabledAt: null,
    creatorLostAt: null,
    ...fields,
  });
  const before = new Date("2026-11-15T00:00:00.000Z");
  const after = new Date("2026-12-15T00:00:00.000Z");

  it("is active until its expiry time, expired from then on", () => {
    expect(keyState(key({}), before)).to.equal("active");
    expect(keyState(key({}), new Date("2026-12-01T10:00:00.000Z"))).to.equal("expired");
    expect(keyState(key({ expiry: "never", expiresAt: null }), after)).to.equal("active");
  });

  it("is dead for a loss of rights at or after creation, and not for one before", () => {
    expect(keyState(key({ creatorLostAt: created }), before)).to.equal("creator_lost_rights");
    expect(keyState(key({ creatorLostAt: before }), before)).to.equal("creator_lost_rights");
    expect(keyState(key({ creatorLostAt: new Date(created.getTime() - 1) }), before)).to.equal("active");
    expect(keyState(key({ disabledAt: before }), before)).to.equal("creator_lost_rights");
  });

  it("reports revoked before expired before creator lost rights", () => {
    const dead = { revokedAt: before, disabledAt: before };
    expect(keyState(key(dead), after)).to.equal("revoked");
    expect(keyState(key({ disabledAt: before }), after)).to.equal("expired");
  });
});
