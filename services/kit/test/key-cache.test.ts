import { randomBytes } from "node:crypto";
import { expect } from "chai";
import {
  type CachedKey,
  fingerprintOf,
  type KeyCacheEntry,
  openKeyCacheEntry,
  sealKeyCacheEntry,
} from "../src/key-cache.js";

describe("key cache seal (HMAC of the entry, its fingerprint and its end)", () => {
  const secret = randomBytes(32).toString("base64url");
  const fingerprint = fingerprintOf(`trk_${"a".repeat(46)}`);
  const now = Date.parse("2026-11-23T10:00:00Z");
  const until = now + 300_000;
  const valid: CachedKey = {
    state: "valid",
    keyId: "key_01JD0000000000000000000000",
    projectId: "prj_01JD0000000000000000000000",
    creatorMemberId: "mem_01JD0000000000000000000000",
    keyCreatedAt: "2026-11-01T00:00:00.000Z",
    expiresAt: null,
  };
  const sealed = sealKeyCacheEntry(secret, fingerprint, valid, until);

  it("opens what it sealed: valid entries and tombstones", () => {
    expect(openKeyCacheEntry(secret, fingerprint, sealed, now)).to.deep.equal(valid);
    const expiring = { ...valid, expiresAt: "2027-01-01T00:00:00.000Z" };
    expect(
      openKeyCacheEntry(secret, fingerprint, sealKeyCacheEntry(secret, fingerprint, expiring, until), now),
    ).to.deep.equal(expiring);
    for (const tombstone of [
      { state: "revoked", keyId: valid.keyId },
      { state: "creator_lost_rights", keyId: valid.keyId },
    ] as KeyCacheEntry[]) {
      const value = sealKeyCacheEntry(secret, fingerprint, tombstone, until);
      expect(openKeyCacheEntry(secret, fingerprint, value, now)).to.deep.equal(tombstone);
    }
  });

  it("stores no secret: the value is the MAC and the entry", () => {
    expect(sealed).to.match(/^[A-Za-z0-9_-]{43}\.\{/);
    expect(sealed).to.not.contain(secret);
  });

  it("reads nothing without a value", () => {
    expect(openKeyCacheEntry(secret, fingerprint, null, now)).to.equal(undefined);
    expect(openKeyCacheEntry(secret, fingerprint, undefined, now)).to.equal(undefined);
    expect(openKeyCacheEntry(secret, fingerprint, "", now)).to.equal(undefined);
  });

  it("refuses an entry without a MAC: what a writer without the secret (an executor) could store", () => {
    // The format of before the seal, and the same payload without its MAC.
    expect(openKeyCacheEntry(secret, fingerprint, JSON.stringify(valid), now)).to.equal(undefined);
    const payload = sealed.slice(sealed.indexOf(".") + 1);
    expect(openKeyCacheEntry(secret, fingerprint, payload, now)).to.equal(undefined);
    expect(openKeyCacheEntry(secret, fingerprint, `.${payload}`, now)).to.equal(undefined);
  });

  it("refuses an entry sealed under another secret (a forger's, or the one of before a rotation)", () => {
    const other = sealKeyCacheEntry(randomBytes(32).toString("base64url"), fingerprint, valid, until);
    expect(openKeyCacheEntry(secret, fingerprint, other, now)).to.equal(undefined);
  });

  it("refuses a changed entry: each field the gateway trusts is covered", () => {
    const payload = sealed.slice(sealed.indexOf(".") + 1);
    const mac = sealed.slice(0, sealed.indexOf("."));
    const changes: [string, string][] = [
      [valid.projectId, "prj_01JDFFFFFFFFFFFFFFFFFFFFFF"],
      [valid.keyId, "key_01JDFFFFFFFFFFFFFFFFFFFFFF"],
      [valid.creatorMemberId, "mem_01JDFFFFFFFFFFFFFFFFFFFFFF"],
      [valid.keyCreatedAt, "2026-11-02T00:00:00.000Z"],
      ['"expiresAt":null', '"expiresAt":"2099-01-01T00:00:00.000Z"'],
      ['"state":"valid"', '"state":"revoked"'],
      [String(until), String(until + 86_400_000)],
      [fingerprint, fingerprintOf("trk_another")],
    ];
    for (const [from, to] of changes) {
      expect(payload, from).to.contain(from);
      const forged = `${mac}.${payload.replace(from, to)}`;
      expect(openKeyCacheEntry(secret, fingerprint, forged, now), `${from} → ${to}`).to.equal(undefined);
    }
    // A flipped bit of the MAC, and a MAC of the wrong length.
    const flipped = Buffer.from(mac, "base64url");
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(
      openKeyCacheEntry(secret, fingerprint, `${flipped.toString("base64url")}.${payload}`, now),
    ).to.equal(undefined);
    expect(openKeyCacheEntry(secret, fingerprint, `${mac.slice(0, 20)}.${payload}`, now)).to.equal(undefined);
  });

  it("refuses a genuine entry filed under another fingerprint (copied to a secret of the copier's choice)", () => {
    const forgersFingerprint = fingerprintOf(`trk_${"b".repeat(46)}`);
    expect(openKeyCacheEntry(secret, forgersFingerprint, sealed, now)).to.equal(undefined);
  });

  it("refuses a genuine entry past its end (an old one put back after a revocation)", () => {
    expect(openKeyCacheEntry(secret, fingerprint, sealed, until - 1)).to.deep.equal(valid);
    expect(openKeyCacheEntry(secret, fingerprint, sealed, until)).to.equal(undefined);
  });

  it("refuses a sealed entry of a shape it does not know, rather than guess", () => {
    const odd = [
      { state: "valid", keyId: valid.keyId },
      { state: "suspended", keyId: valid.keyId },
      { ...valid, expiresAt: 42 },
      { ...valid, keyId: "" },
      null,
    ];
    for (const entry of odd) {
      const value = sealKeyCacheEntry(secret, fingerprint, entry as unknown as KeyCacheEntry, until);
      expect(openKeyCacheEntry(secret, fingerprint, value, now), JSON.stringify(entry)).to.equal(undefined);
    }
  });
});
