// The redaction of a test's summary: a variable's value in every form a target commonly sends it
// back in, checked against Node's own encoders (not the module's), and the last check for fragments.

import { base64, echoes, fragments, secret, secretWindows } from "@testrun/testing/redaction-encodings";
import { expect } from "chai";
import {
  base64Cores,
  encodedForms,
  fragmentLength,
  minBase64FormLength,
  minInWordLength,
  Redactor,
  redactedActual,
} from "../src/steps/redaction.js";
import { oneLine } from "../src/steps/runner.js";
import { Variables } from "../src/steps/variables.js";
import { own, say } from "../src/steps/wording.js";

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

describe(`a value shorter than ${minInWordLength} characters`, () => {
  it("is replaced where it stands alone, never inside a word", () => {
    const vars = new Variables({ V: "s" });
    for (const [text, redacted] of [
      ["s", "{{V}}"],
      ['got "s"', 'got "{{V}}"'],
      ["(s), s. s-s/s?s=s&s", "({{V}}), {{V}}. {{V}}-{{V}}/{{V}}?{{V}}={{V}}&{{V}}"],
      ["1 step passed, steps passed", "1 step passed, steps passed"],
      ["s1 _s s_ 1s sé ès", "s1 _s s_ 1s sé ès"],
    ])
      expect(vars.redact(text as string), text).to.equal(redacted);
  });

  it("counts letters and digits of every script as part of a word, and a JSON escape's backslash", () => {
    expect(new Variables({ E: "é" }).redact("café é")).to.equal("café {{E}}");
    expect(new Variables({ K: "ж" }).redact("жук ж")).to.equal("жук {{K}}");
    // `\n` in a quoted JSON text is one character: its `n` is not the value standing alone.
    expect(new Variables({ N: "n" }).redact('"a\\nb\\n" n')).to.equal('"a\\nb\\n" {{N}}');

    // A value right after an escape stands alone when the escaped character does: at a line's
    // start, after a tab, an escaped backslash or Go's \u003c; not after an escaped letter.
    const body = JSON.stringify({ lines: "one\nab", tab: "x\tab", path: "C:\\ab", html: "<ab>" });
    const go = body.replace("<", "\\u003c").replace(">", "\\u003e");
    expect(new Variables({ A: "ab" }).redact(go)).to.equal(
      '{"lines":"one\\n{{A}}","tab":"x\\t{{A}}","path":"C:\\\\{{A}}","html":"\\u003c{{A}}\\u003e"}',
    );
    expect(new Variables({ A: "ab" }).redact('"\\u00e9ab \\\\nab"')).to.equal('"\\u00e9ab \\\\nab"');
  });

  it("needs both sides free of word characters, whatever the value is made of: a quote or a slash is not replaced in every quoted text or path", () => {
    expect(new Variables({ P: "/v1" }).redact("/api/v1/users /api/v10 /v1 (/v1)")).to.equal(
      "/api/v1/users /api/v10 {{P}} ({{P}})",
    );
    expect(new Variables({ Q: "@@" }).redact("a@@b a @@ b")).to.equal("a@@b a {{Q}} b");
    const quote = new Variables({ Q: '"' });
    expect(quote.redact('got "login", "say \\"hi\\" now" and " alone')).to.equal(
      'got "login", "say \\"hi\\" now" and {{Q}} alone',
    );
    expect(oneLine(say`step ${own(1)} ${'"login"'}: expected ${'"x"'}`, quote)).to.equal(
      'step 1 "login": expected "x"',
    );
  });

  it("is replaced in the forms a target sends it back in, where they stand alone", () => {
    const value = "é&";
    const vars = new Variables({ V: value });
    for (const name of [
      "raw",
      "JSON string (JSON.stringify)",
      "encodeURIComponent",
      "HTML text (only & < >)",
    ]) {
      const echoed = (echoes[name] as (v: string) => string)(value);
      expect(vars.redact(`[${echoed}]`), name).to.equal("[{{V}}]");
      expect(vars.redact(`x${echoed}`), name).to.equal(`x${echoed}`);
    }
  });

  it("is replaced inside words when a longer value shares the form", () => {
    // "%C3%A9" is "é" percent-encoded, and a value of 6 characters of its own.
    expect(new Variables({ E: "é" }).redact("x%C3%A9y")).to.equal("x%C3%A9y");
    expect(new Variables({ E: "é", ENCODED: "%C3%A9" }).redact("x%C3%A9y")).to.equal("x{{E}}y");
  });

  it(`from ${minInWordLength} characters on, is replaced inside words too`, () => {
    expect(new Variables({ V: "abc" }).redact("xabcx abc")).to.equal("xabcx {{V}}");
    expect(new Variables({ V: "abcd" }).redact("xabcdx abcd")).to.equal("x{{V}}x {{V}}");
    expect(new Variables({ PW: "hunter2" }).redact("user_hunter2x")).to.equal("user_{{PW}}x");
  });
});

describe("the executor's own words in a summary", () => {
  const values = { A: "step", B: "1", C: "passed", D: "expected", E: "got", F: "s", G: "status", H: "a" };

  it("are never rewritten, whatever a value holds", () => {
    const vars = new Variables(values);
    expect(oneLine(say`1 step passed`, vars)).to.equal("1 step passed");
    expect(oneLine(say`${own(3)} steps passed`, vars)).to.equal("3 steps passed");
    expect(oneLine(say`step ${own(1)} ${'"s"'}: expected a 2xx status, got ${"500"}`, vars)).to.equal(
      'step 1 "{{F}}": expected a 2xx status, got 500',
    );
  });

  it("leave what came from elsewhere redacted, a plain string whole", () => {
    const vars = new Variables(values);
    expect(oneLine(say`got ${'"1 step passed"'}`, vars)).to.equal('got "{{B}} {{A}} {{C}}"');
    expect(oneLine("1 step passed", vars)).to.equal("{{B}} {{A}} {{C}}");
  });

  it("do not keep a value that runs from elsewhere into them", () => {
    const vars = new Variables({ LONG: "hunter2 passed" });
    expect(oneLine(say`${"got hunter2"} passed`, vars)).to.equal("got {{LONG}}");
  });

  it("are one line, whitespace collapsed across pieces, tokens not replaced a second time", () => {
    const vars = new Variables({ NAME: "NAME", TWO: "a b" });
    expect(oneLine(say`  step ${own(2)} ${"\n a\nb "} ${"{{x}}"}  `, vars)).to.equal("step 2 {{TWO}} {{x}}");
    expect(oneLine(say`got ${"NAME"}`, vars)).to.equal("got {{NAME}}");
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
