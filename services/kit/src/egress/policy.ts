// Which addresses an executor may connect to when it runs a test (docs/runs.md, "Egress"). Steps
// reach whatever base URL an editor sets, so without this an environment at 169.254.169.254 reads
// the node's cloud credentials back through a failing step's summary.
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
/** An address range: its network address and prefix length. */
export type Cidr = [Address, number];

/**
 * Refused unless EGRESS_ALLOW_CIDRS makes an exception: nothing under test lives here, but the
 * node's, the cloud's and the executor's own secrets do, or the cluster's own network (a CNI or a
 * VPN on the shared range 100.64.0.0/10). Every range of IANA's IPv4 and IPv6 special-purpose
 * address registries that is not globally reachable, less the private-use ones: 10/8, 172.16/12,
 * 192.168/16 and fc00::/7 stay allowed, as self-hosted teams test internal staging there (the
 * chart refuses the cluster's own ranges in them: EGRESS_DENY_CIDRS). Besides those: multicast,
 * the deprecated site-local fec0::/10 and 6to4 relays, and the clouds' metadata addresses. The
 * IPv6 forms that carry an IPv4 address are judged as that address (ipv4Carriers), except two that
 * cannot be, refused whole, which no exception reaches (parseAllowList refuses an entry inside
 * them): local-use NAT64 and Teredo.
 */
export const defaultBlockedRanges: readonly { cidr: string; what: string }[] = [
  { cidr: "0.0.0.0/8", what: 'unspecified, "this network": 0.0.0.0 connects to the host itself' },
  {
    cidr: "100.64.0.0/10",
    what: "shared address space (carrier-grade NAT): some clusters' pods, VPNs such as Tailscale",
  },
  { cidr: "127.0.0.0/8", what: "loopback" },
  {
    cidr: "169.254.0.0/16",
    what: "link-local: cloud metadata 169.254.169.254, the ECS and EKS credential agents 169.254.170.2 and .23",
  },
  {
    cidr: "100.100.100.200/32",
    what: "Alibaba Cloud metadata (refused even where 100.64.0.0/10 is allowed)",
  },
  { cidr: "168.63.129.16/32", what: "Azure platform endpoint (WireServer)" },
  { cidr: "192.0.0.0/24", what: "IETF protocol assignments: DS-Lite, NAT64 discovery, PCP and TURN anycast" },
  { cidr: "192.0.2.0/24", what: "documentation (TEST-NET-1)" },
  { cidr: "192.88.99.0/24", what: "6to4 relay anycast (deprecated)" },
  { cidr: "198.18.0.0/15", what: "benchmarking" },
  { cidr: "198.51.100.0/24", what: "documentation (TEST-NET-2)" },
  { cidr: "203.0.113.0/24", what: "documentation (TEST-NET-3)" },
  { cidr: "224.0.0.0/4", what: "multicast" },
  { cidr: "240.0.0.0/4", what: "reserved" },
  { cidr: "255.255.255.255/32", what: "limited broadcast" },
  { cidr: "::/128", what: "unspecified" },
  { cidr: "::1/128", what: "loopback" },
  { cidr: "::/96", what: "IPv4-compatible (deprecated)" },
  { cidr: "100::/64", what: "discard-only" },
  { cidr: "100:0:0:1::/64", what: "dummy prefix (RFC 9780)" },
  {
    cidr: "2001::/23",
    what: "IETF protocol assignments: benchmarking 2001:2::/48, ORCHIDv2, AMT, AS112 and anycast services",
  },
  { cidr: "2001::/32", what: "Teredo: carries an IPv4 address, obfuscated" },
  { cidr: "2001:db8::/32", what: "documentation" },
  { cidr: "3fff::/20", what: "documentation (RFC 9637)" },
  { cidr: "5f00::/16", what: "segment routing (SRv6) SIDs" },
  { cidr: "fe80::/10", what: "link-local" },
  { cidr: "fec0::/10", what: "site-local (deprecated; some networks still route it)" },
  { cidr: "ff00::/8", what: "multicast" },
  { cidr: "fd00:ec2::254/128", what: "AWS metadata over IPv6" },
  { cidr: "fd00:ec2::23/128", what: "EKS Pod Identity agent over IPv6" },
  { cidr: "fd20:ce::254/128", what: "Google Cloud metadata over IPv6" },
  { cidr: "fd00:42::42/128", what: "Scaleway metadata over IPv6" },
  {
    cidr: "64:ff9b:1::/48",
    what: "local-use NAT64 (RFC 8215): the IPv4 address it carries sits where the network chose, so it cannot be judged",
  },
];

/**
 * IPv6 forms that carry an IPv4 address a connection ends up at, classified as that IPv4 address:
 * ::ffff:127.0.0.1 is loopback, 64:ff9b::a9fe:a9fe (NAT64) and 2002:a9fe:a9fe:: (6to4, the IPv4
 * address in groups 1-2) are 169.254.169.254. `at`: the bit where the IPv4 address starts.
 */
const ipv4Carriers = [
  { cidr: "::ffff:0:0/96", at: 96 },
  { cidr: "::ffff:0:0:0/96", at: 96 },
  { cidr: "64:ff9b::/96", at: 96 },
  { cidr: "2002::/16", at: 16 },
].map(({ cidr, at }) => ({ range: ipaddr.IPv6.parseCIDR(cidr), at }));

/** The address a connection to `address` really reaches: an IPv4 address carried in IPv6 unwrapped. */
function effective(address: Address): Address {
  if (address.kind() === "ipv4") return address;
  const v6 = address as ipaddr.IPv6;
  const carrier = ipv4Carriers.find(({ range }) => v6.match(range));
  if (!carrier) return v6;
  const [high = 0, low = 0] = v6.parts.slice(carrier.at / 16, carrier.at / 16 + 2);
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * IPv6 text with its trailing dotted quad as two hex groups: ipaddr.js reads "::8.8.8.8" (an
 * IPv4-compatible address, as DNS answers print it) as the IPv4-mapped ::ffff:8.8.8.8.
 */
function hexTail(text: string): string {
  return text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)(%.*)?$/, (_, a, b, c, d, zone = "") => {
    const group = (high: string, low: string) => ((Number(high) << 8) | Number(low)).toString(16);
    return `${group(a, b)}:${group(c, d)}${zone}`;
  });
}

/** An address from text in canonical form: a dotted quad, or IPv6 (a dotted tail, a zone allowed). */
const parseAddress = (text: string): Address =>
  text.includes(":") ? ipaddr.IPv6.parse(hexTail(text)) : ipaddr.IPv4.parse(text);

const inRange = (address: Address, [network, bits]: Cidr) =>
  address.kind() === network.kind() && address.match(network, bits);

/** Parses "10.0.0.0/8", "fd00::/8" or a single address (a /32 or /128) as written; undefined when invalid. */
function parseWritten(text: string): Cidr | undefined {
  const entry = text.includes("/") ? text : `${text}/${text.includes(":") ? 128 : 32}`;
  // Strict forms only: "10.1/8" or "0x7f.1/32" are not what an operator means to write.
  if (!ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) && !ipaddr.IPv6.isValidCIDR(entry)) return undefined;
  const [address = "", prefix] = entry.split("/");
  return [parseAddress(address), Number(prefix)];
}

/** parseWritten, with an IPv4 range written in IPv6 form (::ffff:10.0.0.0/104) as the IPv4 range. */
function parseCidr(text: string): Cidr | undefined {
  const written = parseWritten(text);
  if (!written) return undefined;
  const [network, bits] = written;
  // Only EGRESS_DENY_CIDRS takes these (parseAllowList refuses them), where wider is safe.
  const carrier = network.kind() === "ipv6" && carrierOf(network as ipaddr.IPv6);
  if (carrier && bits >= carrier.at) return [effective(network), Math.min(32, bits - carrier.at)];
  return written;
}

const carrierOf = (network: ipaddr.IPv6) => ipv4Carriers.find(({ range }) => network.match(range));

/**
 * A comma-separated list of ranges (EGRESS_ALLOW_CIDRS, EGRESS_DENY_CIDRS); blanks around entries
 * and empty entries are ignored. Throws naming the first entry that is not a range.
 */
export function parseCidrList(text: string): Cidr[] {
  const ranges: Cidr[] = [];
  for (const entry of text.split(",").map((e) => e.trim())) {
    if (entry === "") continue;
    const cidr = parseCidr(entry);
    if (!cidr) throw new Error(`"${entry}" is not an address range like 10.0.0.0/8 or fd00::/8`);
    ranges.push(cidr);
  }
  return ranges;
}

/** IPv6 ranges whose addresses carry IPv4 ones, or are blocked as if they did: never allowed. */
const ipv4Forms: Cidr[] = [
  ...ipv4Carriers.map(({ range }) => range),
  ...["64:ff9b:1::/48", "2001::/32"].map((cidr) => ipaddr.IPv6.parseCIDR(cidr)),
];

/** Whether two ranges share an address: one holds the other's network at the shorter prefix. */
const overlaps = ([a, aBits]: Cidr, [b, bBits]: Cidr) =>
  a.kind() === b.kind() && a.match(b, Math.min(aBits, bBits));

/** The widest EGRESS_ALLOW_CIDRS entry taken: /8 of IPv4 (127.0.0.0/8), /16 of IPv6 (fe80::/16). */
const widestAllowed = { ipv4: 8, ipv6: 16 };

/**
 * EGRESS_ALLOW_CIDRS: a list as parseCidrList reads it, less two kinds of entries that would open
 * more than the operator means to. An IPv6 form of IPv4 addresses (64:ff9b::/96 is every IPv4
 * address through NAT64): the IPv4 range itself says what is meant. A range wider than /8 or /16
 * (0.0.0.0/0, ::/0): it allows every block at once. Throws naming the entry, and only it.
 */
export function parseAllowList(text: string): Cidr[] {
  const ranges: Cidr[] = [];
  for (const entry of text.split(",").map((e) => e.trim())) {
    if (entry === "") continue;
    const range = parseWritten(entry);
    if (!range) throw new Error(`"${entry}" is not an address range like 10.0.0.0/8 or fd00::/8`);
    const [network, bits] = range;
    if (bits < widestAllowed[network.kind()])
      throw new Error(
        `"${entry}" is wider than /${widestAllowed[network.kind()]}: allowing everything defeats the guard; list the ranges you need`,
      );
    if (ipv4Forms.some((form) => overlaps(range, form)))
      throw new Error(`"${entry}" holds IPv6 forms of IPv4 addresses: write the IPv4 range itself`);
    ranges.push(range);
  }
  return ranges;
}

const defaultBlocked = defaultBlockedRanges.map(({ cidr }) => parseCidr(cidr) as Cidr);

export interface EgressLists {
  /** EGRESS_ALLOW_CIDRS: exceptions to the default blocks, never to `deny`. */
  allow?: readonly Cidr[];
  /** EGRESS_DENY_CIDRS: refused on top of the default blocks, whatever `allow` says. */
  deny?: readonly Cidr[];
}

/**
 * The rule, in this order: an address in EGRESS_DENY_CIDRS is refused; else an address in a
 * default block is refused unless it is in EGRESS_ALLOW_CIDRS (by an entry as narrow as that block
 * at least, for each block it is in); everything else is allowed.
 */
export class EgressPolicy {
  readonly #allow: readonly Cidr[];
  readonly #deny: readonly Cidr[];

  constructor({ allow = [], deny = [] }: EgressLists = {}) {
    this.#allow = allow;
    this.#deny = deny;
  }

  /** Whether a connection to this address (as DNS or a URL gives it) may be made. */
  allows(address: string): boolean {
    // Only canonical forms: ipaddr.js would also read "127.1" or "0x7f.1", which never reach here
    // (the URL parser and DNS give dotted quads), so anything else is refused, not guessed at.
    if (isIP(address) === 0) return false;
    let parsed: Address;
    try {
      parsed = effective(parseAddress(address));
    } catch {
      return false;
    }
    if (this.#deny.some((range) => inRange(parsed, range))) return false;
    // An exception lifts a block only when it is at least as narrow as the block: allowing a VPN's
    // 100.64.0.0/10 leaves the metadata address 100.100.100.200 inside it refused.
    return defaultBlocked
      .filter((block) => inRange(parsed, block))
      .every(([, bits]) => this.#allow.some((range) => range[1] >= bits && inRange(parsed, range)));
  }
}
