import { expect } from "chai";
import { clientAddressKey, KeyedBuckets, TokenBucket } from "../src/rate-buckets.js";

describe("rate buckets", () => {
  it("a bucket gives perMinute tokens at once, then one back every 60/perMinute seconds", () => {
    let now = 0;
    const bucket = new TokenBucket(2, () => now);
    expect([bucket.take(), bucket.take()]).to.deep.equal([0, 0]);
    expect(bucket.take()).to.equal(30);
    now += 30_000;
    expect(bucket.take()).to.equal(0);
  });

  it("keys have buckets of their own: one key emptied, another still takes", () => {
    const buckets = new KeyedBuckets(1, 10, () => 0);
    expect(buckets.take("a")).to.equal(0);
    expect(buckets.take("a")).to.equal(60);
    expect(buckets.take("b")).to.equal(0);
  });

  it("holds at most maxKeys buckets however many keys come, forgetting the least recently used", () => {
    const buckets = new KeyedBuckets(1, 100, () => 0);
    buckets.take("kept");
    for (let i = 0; i < 10_000; i++) {
      buckets.take(`k${i}`);
      if (i % 50 === 0) buckets.take("kept"); // used again: never the least recent
    }
    expect(buckets.size).to.equal(100);
    expect(buckets.take("kept")).to.be.above(0);
    // k0 was forgotten long ago: a full bucket again.
    expect(buckets.take("k0")).to.equal(0);
  });

  it("limits IPv6 by its /64 whatever the written form, and IPv4-mapped addresses as IPv4", () => {
    const one = clientAddressKey("2001:db8:1:2::1");
    expect(one).to.equal("2001:db8:1:2::/64");
    for (const same of [
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:0DB8:0001:0002:0000:0000:0000:0099",
      "2001:db8:1:2::abcd%eth0",
    ])
      expect(clientAddressKey(same)).to.equal(one);
    expect(clientAddressKey("2001:db8:1:3::1")).to.not.equal(one);
    expect(clientAddressKey("::ffff:192.0.2.7")).to.equal("192.0.2.7");
    expect(clientAddressKey("192.0.2.7")).to.equal("192.0.2.7");
    expect(clientAddressKey("192.0.2.8")).to.not.equal("192.0.2.7");
    expect(clientAddressKey(undefined)).to.equal("unknown");
    expect(clientAddressKey("x".repeat(5000))).to.have.length(100);
  });
});
