// The redaction of a test's summary: a variable's value in every form a target commonly sends it
// back in, checked against Node's own encoders (not the module's), and the last check for fragments.

import { base64, echoes, fragments, secret, secretWindows } from "@testrun/executor/testing";
import { expect } from "chai";
import {
  base64Cores,
  encodedForms,
  fragmentLength,
  minBase64FormLength,
  Redactor,
  redactedActual,
} from "../src/steps/redaction.js";
import { Variables } from "../src/steps/variables.js";

describe("redaction of a variable's value in the forms a target sends it back in", () => {
  const vars = () => new Variables({ SECRET: secret });

  for (const [name, encode] of Object.entries(echoes)) {
    it(`replaces it sent back as ${name}`, () => {
      const echoed = encode(secret);
      const redacted = vars().redact(`got [${echoed}] back`);
      expect(redacted).to.include("{{SECRET}}");
      expect(redacted).not.to.include(echoed);
      for (const leak of [...secretWindows(encode), ...fragments(secret)])
        expect(redacted).not.to.include(leak);
    });
  }

  it("leaves of a base64 text holding it only the characters that also depend on its neighbours", () => {
    for (const user of ["", "a", "ab", "abc", "abcd", "abcde"]) {
      for (const after of ["", "x", "xy", "xyz"]) {
        const text = base64(`${user}:${secret}${after}`);
        const redacted = vars().redact(text);
        const [before, rest] = redacted.split("{{SECRET}}");
        expect(rest, `${user}|${after}`).to.be.a("string");
        // In front: the characters of `user:` and at most 3 mixing its last bytes with the value's
        // first; behind: at most 3 mixing the value's last bytes with what follows, and padding.
        expect(before?.length).to.be.at.most(Math.ceil(((user.length + 1) * 4) / 3) + 1);
        expect(rest?.length).to.be.at.most(Math.ceil((after.length * 4) / 3) + 4);
      }
    }
  });

  it("computes each aligned core so that every base64 text holding the bytes at that offset contains it", () => {
    const value = Buffer.from(secret, "utf8");
    const cores = base64Cores(value).filter((_, i) => i % 2 === 0);
    for (let before = 0; before < 7; before++) {
      for (let after = 0; after < 4; after++) {
        for (const fill of [0x00, 0xff, 0x5a]) {
          const text = Buffer.concat([Buffer.alloc(before, fill), value, Buffer.alloc(after, fill)]);
          expect(text.toString("base64")).to.include(cores[before % 3]);
        }
      }
    }
  });

  it("replaces percent-encodings exactly as Node's encoders write them", () => {
    const forms = encodedForms(secret);
    for (const form of [
      encodeURIComponent(secret),
      encodeURI(secret),
      new URLSearchParams({ v: secret }).toString().slice(2),
      new URL(`http://target.example/${secret}`).pathname.slice(1),
    ])
      expect(forms).to.include(form);
  });

  it("names a form shared by two values after the project's variable, and replaces the longest first", () => {
    const both = new Variables({ LONG: "abcd-secret-efgh", SHORT: "secret" });
    expect(both.redact("abcd-secret-efgh and secret")).to.equal("{{LONG}} and {{SHORT}}");
    const echoed = new Variables({ TOKEN: "tok-123456" });
    echoed.save("saved", "tok-123456");
    expect(echoed.redact(base64("tok-123456"))).to.equal("{{TOKEN}}");
  });

  it("keeps redacting a saved value after a step saved another under the same name", () => {
    const session = new Variables({});
    session.save("token", "first-session-token");
    session.save("token", "second-session-token");
    expect(session.redact("first-session-token, second-session-token")).to.equal("{{token}}, {{token}}");
  });

  it("replaces a short value's text forms as before, but no base64 form shorter than the minimum", () => {
    const short = new Variables({ PIN: "ok" });
    // base64 of "ok" is "b2s=" / "b2s": replacing those wherever they occur would garble text.
    expect(minBase64FormLength).to.equal(6);
    expect(short.redact("b2s= then ok")).to.equal("b2s= then {{PIN}}");
    const saved = new Variables({});
    saved.save("flag", "ok");
    expect(saved.redact("ok")).to.equal("ok");
  });

  it("does not garble a summary without secrets", () => {
    const summary = 'step 1 "s": expected header x-echo to contain "nope", got "hello, welcome"';
    expect(vars().redact(summary)).to.equal(summary);
  });
});

describe("the last check on an actual value", () => {
  const value = "correct-horse-battery-staple";
  const vars = new Variables({ PHRASE: value });

  it(`replaces a whole actual value holding ${fragmentLength} characters of a value in a row`, () => {
    // Cut and upper-cased in part: no form of the value matches, a fragment is left.
    expect(vars.guardActual('"HORSE-battery-stAPLE"')).to.equal(redactedActual);
    expect(vars.guardActual('"prefix correct-h…"')).to.equal(redactedActual);
  });

  it("finds a fragment inside a JSON-quoted actual value, escapes undone", () => {
    const quoted = new Variables({ Q: 'ab"cd\\efgh-ijkl' });
    expect(quoted.guardActual(JSON.stringify('xx ab"cd\\ef yy'))).to.equal(redactedActual);
  });

  it(`keeps an actual value with at most ${fragmentLength - 1} characters of a value in a row`, () => {
    expect(vars.guardActual('"horse-b and {{PHRASE}}"')).to.equal('"horse-b and {{PHRASE}}"');
    expect(new Variables({ SHORT: "abcdefg" }).guardActual('"abcdefg"')).to.equal('"abcdefg"');
  });

  it("checks the values steps saved too", () => {
    const session = new Variables({});
    session.save("token", "eyJhbGciOiJIUzI1NiJ9.payload.signature");
    expect(session.guardActual('"…iOiJIUzI1NiJ9.pay"')).to.equal(redactedActual);
  });

  it("replaces nothing when there are no values", () => {
    expect(new Redactor().holdsFragment("anything at all, 12345678")).to.equal(false);
  });
});
