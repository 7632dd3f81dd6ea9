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
 * node's, the cloud's and the executor's own secrets do. Private ranges (10/8, 172.16/12,
 * 192.168/16, fc00::/7) are not here: self-hosted teams test their internal staging.
 */
export const defaultBlockedRanges: readonly { cidr: string; what: string }[] = [
  { cidr: "0.0.0.0/8", what: "unspecified: 0.0.0.0 connects to the host itself" },
  { cidr: "127.0.0.0/8", what: "loopback" },
  {
    cidr: "169.254.0.0/16",
    what: "link-local: cloud metadata 169.254.169.254, the ECS and EKS credential agents 169.254.170.2 and .23",
  },
  { cidr: "100.100.100.200/32", what: "Alibaba Cloud metadata" },
  { cidr: "168.63.129.16/32", what: "Azure platform endpoint (WireServer)" },
  { cidr: "224.0.0.0/4", what: "multicast" },
  { cidr: "240.0.0.0/4", what: "reserved, and broadcast 255.255.255.255" },
  { cidr: "::/128", what: "unspecified" },
  { cidr: "::1/128", what: "loopback" },
  { cidr: "::/96", what: "IPv4-compatible (deprecated)" },
  { cidr: "fe80::/10", what: "link-local" },
  { cidr: "ff00::/8", what: "multicast" },
  { cidr: "fd00:ec2::254/128", what: "AWS metadata over IPv6" },
  { cidr: "fd00:ec2::23/128", what: "EKS Pod Identity agent over IPv6" },
];

/**
 * IPv6 forms that carry an IPv4 address a connection ends up at, classified as that IPv4 address:
 * ::ffff:127.0.0.1 is loopback, 64:ff9b::a9fe:a9fe (NAT64) is 169.254.169.254.
 */
const ipv4Carriers = ["::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96"].map((cidr) =>
  ipaddr.IPv6.parseCIDR(cidr),
);

/** The address a connection to `address` really reaches: an IPv4 address carried in IPv6 unwrapped. */
function effective(address: Address): Address {
  if (address.kind() === "ipv4") return address;
  const v6 = address as ipaddr.IPv6;
  if (!ipv4Carriers.some((carrier) => v6.match(carrier))) return v6;
  const [high = 0, low = 0] = v6.parts.slice(6);
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

/** Parses "10.0.0.0/8", "fd00::/8" or a single address (a /32 or /128); undefined when invalid. */
function parseCidr(text: string): Cidr | undefined {
  const entry = text.includes("/") ? text : `${text}/${text.includes(":") ? 128 : 32}`;
  // Strict forms only: "10.1/8" or "0x7f.1/32" are not what an operator means to write.
  if (!ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) && !ipaddr.IPv6.isValidCIDR(entry)) return undefined;
  const [address = "", prefix] = entry.split("/");
  const [network, bits] = [parseAddress(address), Number(prefix)];
  // An IPv4 range written in IPv6 form (::ffff:10.0.0.0/104) applies to the IPv4 addresses.
  const unwrapped = effective(network);
  if (unwrapped.kind() === "ipv4" && network.kind() === "ipv6") {
    if (bits < 96) return [network, bits];
    return [unwrapped, bits - 96];
  }
  return [network, bits];
}

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

const defaultBlocked = defaultBlockedRanges.map(({ cidr }) => parseCidr(cidr) as Cidr);

export interface EgressLists {
  /** EGRESS_ALLOW_CIDRS: exceptions to the default blocks, never to `deny`. */
  allow?: readonly Cidr[];
  /** EGRESS_DENY_CIDRS: refused on top of the default blocks, whatever `allow` says. */
  deny?: readonly Cidr[];
}

/**
 * The rule, in this order: an address in EGRESS_DENY_CIDRS is refused; else an address in a
 * default block is refused unless it is in EGRESS_ALLOW_CIDRS; everything else is allowed.
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
    if (!defaultBlocked.some((range) => inRange(parsed, range))) return true;
    return this.#allow.some((range) => inRange(parsed, range));
  }
}
