import { expect } from "chai";
import { presentedKey } from "../src/auth.js";
import { HttpError } from "../src/http-error.js";
import { clientAddressKey } from "../src/limits.js";

describe("gateway: reading the presented key", () => {
  it("takes it from Authorization: Bearer, in any letter case of the scheme", () => {
    expect(presentedKey({ authorization: "Bearer trk_abc" })).to.equal("trk_abc");
    expect(presentedKey({ authorization: "bearer  trk_abc " })).to.equal("trk_abc");
  });

  it("takes it from X-Api-Key", () => {
    expect(presentedKey({ "x-api-key": " trk_abc" })).to.equal("trk_abc");
  });

  it("accepts both headers when they carry the same key, refuses different ones", () => {
    expect(presentedKey({ authorization: "Bearer trk_a", "x-api-key": "trk_a" })).to.equal("trk_a");
    expect(() => presentedKey({ authorization: "Bearer trk_a", "x-api-key": "trk_b" }))
      .to.throw(HttpError)
      .with.property("status", 400);
  });

  it("has no key when neither header carries one", () => {
    expect(presentedKey({})).to.equal(undefined);
    expect(presentedKey({ "x-api-key": "  " })).to.equal(undefined);
  });

  it("leaves another Authorization scheme alone when X-Api-Key carries the key", () => {
    expect(presentedKey({ authorization: "Basic dXNlcjpwdw==", "x-api-key": "trk_a" })).to.equal("trk_a");
  });

  it("calls any other Authorization value malformed", () => {
    for (const value of ["Basic dXNlcjpwdw==", "Bearer", "Bearer a b", "trk_abc"]) {
      expect(presentedKey({ authorization: value }), value).to.deep.equal({ malformed: true });
    }
  });
});

describe("gateway: the unit failed authentications are counted by", () => {
  it("is the IPv4 address, also when it arrives IPv4-mapped", () => {
    expect(clientAddressKey("203.0.113.7")).to.equal("203.0.113.7");
    expect(clientAddressKey("::ffff:203.0.113.7")).to.equal("203.0.113.7");
  });

  it("is the /64 network of an IPv6 address, however it is written", () => {
    const network = "2001:db8:aa:1::/64";
    expect(clientAddressKey("2001:db8:aa:1:2:3:4:5")).to.equal(network);
    expect(clientAddressKey("2001:0db8:00aa:0001::9")).to.equal(network);
    expect(clientAddressKey("2001:DB8:AA:1:ffff::1%eth0")).to.equal(network);
    expect(clientAddressKey("2001:db8::1")).to.equal("2001:db8:0:0::/64");
    expect(clientAddressKey("::1")).to.equal("0:0:0:0::/64");
  });
});
