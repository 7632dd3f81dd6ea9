// Addresses inside each range the egress guard refuses by default (services/kit/src/egress/policy.ts,
// defaultBlockedRanges), written out by hand rather than computed from the ranges, and the other ways
// a URL or a DNS answer can name an IPv4 one: for the tests of the executors' steps and of webhook
// destinations, which must refuse every range, each as its own test.

/** Per default blocked range: its first and last address where they are usable, and one inside. */
export const blockedSamples: Readonly<Record<string, readonly string[]>> = {
  "0.0.0.0/8": ["0.0.0.0", "0.1.2.3", "0.255.255.255"],
  "100.64.0.0/10": ["100.64.0.1", "100.100.1.1", "100.127.255.254"],
  "127.0.0.0/8": ["127.0.0.1", "127.0.0.2", "127.255.255.254"],
  "169.254.0.0/16": ["169.254.0.1", "169.254.169.254", "169.254.170.2", "169.254.170.23", "169.254.255.255"],
  "100.100.100.200/32": ["100.100.100.200"],
  "168.63.129.16/32": ["168.63.129.16"],
  "192.0.0.0/24": ["192.0.0.1", "192.0.0.170", "192.0.0.255"],
  "192.0.2.0/24": ["192.0.2.1", "192.0.2.255"],
  "192.88.99.0/24": ["192.88.99.1", "192.88.99.255"],
  "198.18.0.0/15": ["198.18.0.1", "198.19.255.254"],
  "198.51.100.0/24": ["198.51.100.1", "198.51.100.255"],
  "203.0.113.0/24": ["203.0.113.1", "203.0.113.255"],
  "224.0.0.0/4": ["224.0.0.1", "239.255.255.250"],
  "240.0.0.0/4": ["240.0.0.1", "255.255.255.254"],
  "255.255.255.255/32": ["255.255.255.255"],
  "::/128": ["::"],
  "::1/128": ["::1"],
  "::/96": ["::7f00:1", "::a00:1", "::808:808"],
  "100::/64": ["100::1", "100::ffff:ffff:ffff:ffff"],
  "100:0:0:1::/64": ["100:0:0:1::1", "100::1:ffff:ffff:ffff:ffff"],
  "2001::/23": ["2001:2::1", "2001:20::1", "2001:1ff:ffff::1"],
  "2001::/32": ["2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
  "2001:db8::/32": ["2001:db8::1", "2001:db8:ffff::1"],
  "3fff::/20": ["3fff::1", "3fff:fff::1"],
  "5f00::/16": ["5f00::1", "5f00:ffff::1"],
  "fe80::/10": ["fe80::1", "febf:ffff::1"],
  "fec0::/10": ["fec0::1", "feff:ffff::1"],
  "ff00::/8": ["ff02::1", "ff05::2"],
  "fd00:ec2::254/128": ["fd00:ec2::254"],
  "fd00:ec2::23/128": ["fd00:ec2::23"],
  "fd20:ce::254/128": ["fd20:ce::254", "fd20:ce:0:0:0:0:0:254"],
  "fd00:42::42/128": ["fd00:42::42"],
  "64:ff9b:1::/48": ["64:ff9b:1::a9fe:a9fe", "64:ff9b:1:a9fe:a9fe::", "64:ff9b:1::808:808"],
};

const octets = (v4: string) => v4.split(".").map(Number);
const hexGroups = (v4: string) => {
  const [a = 0, b = 0, c = 0, d = 0] = octets(v4);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
};

/**
 * The IPv6 addresses that carry an IPv4 one, which the guard judges as that address: IPv4-mapped
 * (dotted and in hex), IPv4-translated, NAT64 and 6to4.
 */
export function ipv6FormsOf(v4: string): string[] {
  const [high, low] = hexGroups(v4);
  return [
    `::ffff:${v4}`,
    `::ffff:${high}:${low}`,
    `::ffff:0:${v4}`,
    `64:ff9b::${v4}`,
    `2002:${high}:${low}::1`,
  ];
}

/**
 * Host spellings a URL parser reads as this IPv4 address: one decimal number, one hex number,
 * dotted octal, dotted hex, and a short form (the last part filling the rest).
 */
export function ipv4Spellings(v4: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = octets(v4);
  const number = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  return [
    String(number),
    `0x${number.toString(16)}`,
    [a, b, c, d].map((part) => `0${part.toString(8)}`).join("."),
    [a, b, c, d].map((part) => `0x${part.toString(16)}`).join("."),
    `${a}.${(b << 16) + (c << 8) + d}`,
  ];
}

/** An address as a URL's host: IPv6 in brackets. */
export const urlHost = (address: string) => (address.includes(":") ? `[${address}]` : address);
