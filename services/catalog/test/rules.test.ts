import { randomBytes } from "node:crypto";
import { Permission, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import { isBase64Key, VariableCipher } from "../src/cipher.js";
import { Violations } from "../src/errors.js";
import {
  apiKeyMay,
  keyStillValid,
  losesKeyRights,
  mayAddMember,
  mayChangeRole,
  mayRemove,
  memberMay,
} from "../src/roles.js";
import { isJsonPath } from "../src/steps.js";
import { checkBaseUrl, checkTags } from "../src/validate.js";

// Unit tests of the dense rules; the service tests check them again through real calls.

const { OWNER, ADMIN, EDITOR, VIEWER } = Role;

describe("catalog rules", () => {
  describe("roles", () => {
    it("grant each permission to the roles of the rights table", () => {
      const table: [Permission, Role[]][] = [
        [Permission.READ, [OWNER, ADMIN, EDITOR, VIEWER]],
        [Permission.READ_SETTINGS, [OWNER, ADMIN, EDITOR, VIEWER]],
        [Permission.START_RUN, [OWNER, ADMIN, EDITOR]],
        [Permission.EDIT, [OWNER, ADMIN, EDITOR]],
        [Permission.ADMIN, [OWNER, ADMIN]],
      ];
      for (const [permission, allowed] of table) {
        for (const role of [OWNER, ADMIN, EDITOR, VIEWER]) {
          expect(memberMay(role, permission), `${Role[role]} ${Permission[permission]}`).to.equal(
            allowed.includes(role),
          );
        }
        expect(memberMay(OWNER, Permission.UNSPECIFIED)).to.equal(false);
      }
      expect(
        [
          Permission.READ,
          Permission.READ_SETTINGS,
          Permission.START_RUN,
          Permission.EDIT,
          Permission.ADMIN,
        ].filter(apiKeyMay),
      ).to.deep.equal([Permission.READ, Permission.START_RUN]);
    });

    it("keep OWNER matters to OWNERs and operators", () => {
      expect(mayAddMember(ADMIN, EDITOR)).to.equal(null);
      expect(mayAddMember(ADMIN, OWNER)).to.be.a("string");
      expect(mayAddMember(OWNER, OWNER)).to.equal(null);
      expect(mayAddMember(EDITOR, VIEWER)).to.be.a("string");
      expect(mayAddMember("operator", OWNER)).to.equal(null);

      expect(mayChangeRole(ADMIN, EDITOR, VIEWER)).to.equal(null);
      expect(mayChangeRole(ADMIN, ADMIN, EDITOR)).to.equal(null);
      expect(mayChangeRole(ADMIN, OWNER, ADMIN)).to.be.a("string");
      expect(mayChangeRole(ADMIN, ADMIN, OWNER)).to.be.a("string");
      expect(mayChangeRole(OWNER, OWNER, VIEWER)).to.equal(null);
      expect(mayChangeRole(EDITOR, VIEWER, EDITOR)).to.be.a("string");

      expect(mayRemove(VIEWER, VIEWER, true)).to.equal(null);
      expect(mayRemove(EDITOR, VIEWER, false)).to.be.a("string");
      expect(mayRemove(ADMIN, ADMIN, false)).to.equal(null);
      expect(mayRemove(ADMIN, OWNER, false)).to.be.a("string");
      expect(mayRemove(OWNER, OWNER, false)).to.equal(null);
      expect(mayRemove("operator", OWNER, false)).to.equal(null);
    });

    it("count only a fall from EDITOR-or-above to VIEWER as a loss of rights", () => {
      expect(losesKeyRights(OWNER, VIEWER)).to.equal(true);
      expect(losesKeyRights(EDITOR, VIEWER)).to.equal(true);
      expect(losesKeyRights(ADMIN, EDITOR)).to.equal(false);
      expect(losesKeyRights(VIEWER, VIEWER)).to.equal(false);
      expect(losesKeyRights(VIEWER, EDITOR)).to.equal(false);
    });

    it("keep a key valid only if created after the creator's last loss, while still EDITOR or above", () => {
      const lost = new Date("2026-11-22T10:00:00.000Z");
      const after = new Date(lost.getTime() + 1);
      const editor = { role: EDITOR, active: true, rightsLostAt: lost };
      expect(keyStillValid(editor, after)).to.equal(true);
      expect(keyStillValid(editor, lost)).to.equal(false);
      expect(keyStillValid(editor, new Date(lost.getTime() - 1))).to.equal(false);
      expect(keyStillValid({ ...editor, rightsLostAt: null }, lost)).to.equal(true);
      expect(keyStillValid({ ...editor, role: VIEWER }, after)).to.equal(false);
      expect(keyStillValid({ ...editor, active: false }, after)).to.equal(false);
    });
  });

  it("JSON paths are the documented subset", () => {
    for (const path of ["$", "$.a", "$.items[0].id", "$['a b']", '$["x"][12]', "$.a-b.c_d"]) {
      expect(isJsonPath(path), path).to.equal(true);
    }
    for (const path of ["", "a", "$.", "$..a", "$[a]", "$['a]", "$[-1]", "$.a[0", "$ .a", "$.*"]) {
      expect(isJsonPath(path), path).to.equal(false);
    }
  });

  it("tags are trimmed, deduplicated ignoring case, and at most 50", () => {
    const violations = new Violations();
    expect(checkTags([" Smoke ", "smoke", "API", "api "], "tags", violations)).to.deep.equal([
      "Smoke",
      "API",
    ]);
    expect(violations.empty).to.equal(true);
    checkTags(
      Array.from({ length: 51 }, (_, i) => `t${i}`),
      "tags",
      violations,
    );
    checkTags(["ok", "a\tb", "x".repeat(65)], "more", violations);
    expect(violations.list.map((v) => v.field)).to.deep.equal(["tags", "more[1]", "more[2]"]);
  });

  it("base URLs lose their trailing slashes", () => {
    const violations = new Violations();
    expect(checkBaseUrl("http://localhost:8080//", "base_url", violations)).to.equal("http://localhost:8080");
    expect(checkBaseUrl(" https://x.io/a/b ", "base_url", violations)).to.equal("https://x.io/a/b");
    expect(violations.empty).to.equal(true);
    checkBaseUrl("https://user@ex ample.com", "base_url", violations);
    checkBaseUrl("https://", "base_url", violations);
    expect(violations.list).to.have.length(2);
  });

  describe("the variable cipher", () => {
    const key = randomBytes(32).toString("base64");

    it("round-trips values bound to their variable, and detects any change", () => {
      const cipher = new VariableCipher(key);
      const sealed = cipher.seal("pä55wörd ✓", "prj_1", "var_1");
      expect(sealed.iv).to.have.length(12);
      expect(sealed.tag).to.have.length(16);
      expect(cipher.open(sealed, "prj_1", "var_1")).to.equal("pä55wörd ✓");
      expect(() => cipher.open(sealed, "prj_1", "var_2")).to.throw();
      expect(() => cipher.open(sealed, "prj_2", "var_1")).to.throw();
      const flipped = Buffer.from(sealed.ciphertext);
      flipped[0] = (flipped[0] ?? 0) ^ 1;
      expect(() => cipher.open({ ...sealed, ciphertext: flipped }, "prj_1", "var_1")).to.throw();
      expect(() =>
        new VariableCipher(randomBytes(32).toString("base64")).open(sealed, "prj_1", "var_1"),
      ).to.throw();
    });

    it("accepts only 32-byte keys in base64 or base64url", () => {
      expect(isBase64Key(key)).to.equal(true);
      expect(isBase64Key(randomBytes(32).toString("base64url"))).to.equal(true);
      expect(isBase64Key(randomBytes(16).toString("base64"))).to.equal(false);
      expect(isBase64Key("x".repeat(44))).to.equal(false);
      expect(() => new VariableCipher(randomBytes(31).toString("base64"))).to.throw(/32 bytes/);
    });
  });
});
