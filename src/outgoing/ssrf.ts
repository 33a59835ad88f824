import ipaddr from "ipaddr.js";
import { lookup } from "node:dns/promises";
import { describeNetworkError } from "./networkErrors";

/**
 * The SSRF guard: destination URLs are user input, and the relay runs inside
 * someone's network. Checked after DNS resolution, so a hostname that
 * resolves to a forbidden address is refused just like the literal address
 * (docs/delivery.md, "Which addresses a delivery may reach").
 *
 * - Always refused: link-local (169.254.0.0/16 — where cloud metadata
 *   services live — and fe80::/10), the well-known IPv6 metadata address,
 *   IPv4-compatible IPv6 (`::a.b.c.d`, deprecated and never a real target),
 *   and NAT64 (`64:ff9b::/96`) or IPv4-mapped forms of an address that is
 *   itself refused or not globally routable: those spellings must not reach
 *   what the plain IPv4 address may not.
 * - Refused only with blockPrivate (HOOKRELAY_BLOCK_PRIVATE_DESTINATIONS, and
 *   always for endpoints a portal link set): every address that is not
 *   global unicast: loopback, RFC 1918 private, carrier-grade NAT, IPv6
 *   unique-local, unspecified, multicast, reserved, benchmarking, every
 *   IPv4-in-IPv6 form (mapped, compatible, NAT64, 6to4, Teredo), and the rest
 *   of ipaddr.js's special ranges. Allowed by default because homelab
 *   destinations live there.
 */
export class DestinationRefused extends Error {}

/** AWS's IPv6 instance-metadata endpoint sits in unique-local space; it is metadata all the same. */
const METADATA_V6 = ipaddr.parse("fd00:ec2::254").toNormalizedString();

const RANGE_NAMES: Record<string, string> = {
  linkLocal: "link-local (cloud metadata)",
  loopback: "loopback",
  private: "private",
  carrierGradeNat: "carrier-grade NAT",
  uniqueLocal: "unique-local",
  unspecified: "unspecified",
  ipv4Mapped: "IPv4-mapped",
  ipv4Compatible: "IPv4-compatible",
  rfc6052: "NAT64",
  rfc6145: "IPv4-translated",
  "6to4": "6to4",
  teredo: "Teredo",
};

/** ipaddr.js's name for global unicast: the one range a blocked-private target may be in. */
const GLOBAL = "unicast";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * An IPv6 address's range, with the IPv4-compatible form (`::a.b.c.d`, the
 * first 96 bits zero but not `::` or `::1`) named: ipaddr.js calls it unicast.
 */
function rangeOf(ip: Address): string {
  const range = ip.range();
  if (ip.kind() === "ipv6" && range === GLOBAL && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return "ipv4Compatible";
  return range;
}

/** The IPv4 address an IPv6 form carries in its last 32 bits (mapped, compatible, translated, NAT64 /96), or null. */
function embeddedIPv4(ip: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const nat64 = range === "rfc6052" && ip.parts[0] === 0x64 && ip.parts[1] === 0xff9b && ip.parts.slice(2, 6).every((p) => p === 0);
  if (!(nat64 || range === "ipv4Mapped" || range === "ipv4Compatible" || range === "rfc6145")) return null;
  const [hi, lo] = [ip.parts[6]!, ip.parts[7]!];
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/** Why `address` may not be contacted ("a link-local … address"), or null when it may. */
export function refusalReason(address: string, blockPrivate: boolean): string | null {
  let ip: Address;
  try {
    // ipaddr.js reads a dotted tail such as "::127.0.0.1" as IPv4-mapped; the URL parser (and the OS) as IPv4-compatible.
    const text = address.includes(":") && address.includes(".") ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address;
    ip = ipaddr.parse(text);
  } catch {
    return "not an IP address";
  }
  const named = (range: string) => {
    const name = RANGE_NAMES[range] ?? range;
    return `${/^[aeiouIU]/.test(name) ? "an" : "a"} ${name} address`;
  };
  if (ip.kind() === "ipv4") {
    const range = rangeOf(ip);
    if (range === "linkLocal") return named(range);
    return blockPrivate && range !== GLOBAL ? named(range) : null;
  }
  const v6 = ip as ipaddr.IPv6;
  if (v6.toNormalizedString() === METADATA_V6) return "a cloud metadata address";
  const range = rangeOf(v6);
  if (range === "linkLocal" || range === "ipv4Compatible") return named(range);
  const inner = embeddedIPv4(v6, range);
  if (inner) {
    const innerRange = rangeOf(inner);
    // The mapped form is how a dual-stack socket spells a plain IPv4 peer: judged as that address.
    // Other forms of a non-global address are refused outright (RFC 6052 forbids NAT64 of one).
    if (innerRange === "linkLocal" || (range !== "ipv4Mapped" && innerRange !== GLOBAL) || (blockPrivate && innerRange !== GLOBAL)) {
      return `${named(range)} of ${inner.toString()}, ${named(innerRange)}`;
    }
  }
  return blockPrivate && range !== GLOBAL ? named(range) : null;
}

export interface ResolvedTarget {
  /** The address that was checked and will be contacted. */
  address: string;
  family: 4 | 6;
  /** The URL named the address itself: the verdict never changes. */
  literal: boolean;
}

type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;
const systemLookup: Lookup = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves the URL's host and checks every address it resolves to (a host
 * with one good and one forbidden address is refused: the connection could
 * go to either). Throws DestinationRefused with a message fit for the attempt row.
 */
export async function resolveAllowedTarget(url: URL, blockPrivate: boolean, resolve: Lookup = systemLookup): Promise<ResolvedTarget> {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const known = literalVerdicts.get(`${blockPrivate ? 1 : 0}${host}`);
  if (known instanceof DestinationRefused) throw known;
  if (known) return known;
  let addresses: { address: string; family: number }[];
  const literal = ipaddr.isValid(host);
  if (literal) {
    addresses = [{ address: host, family: host.includes(":") ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new DnsFailure(`could not resolve ${host}: ${describeNetworkError(err)}`);
    }
    if (addresses.length === 0) throw new DnsFailure(`could not resolve ${host}: no addresses`);
  }
  for (const a of addresses) {
    const reason = refusalReason(a.address, blockPrivate);
    if (reason) {
      const refused = new DestinationRefused(literal ? `refused: ${host} is ${reason}` : `refused: ${host} resolves to ${a.address}, ${reason}`);
      if (literal) remember(blockPrivate, host, refused);
      throw refused;
    }
  }
  const first = addresses[0]!;
  const target: ResolvedTarget = { address: first.address, family: first.family === 6 ? 6 : 4, literal };
  if (literal) remember(blockPrivate, host, target);
  return target;
}

/**
 * Verdicts on literal addresses never change, and parsing and classifying
 * one costs more than the rest of building a request: kept per setting.
 * Names are resolved every time (their answers may change).
 */
const literalVerdicts = new Map<string, ResolvedTarget | DestinationRefused>();
function remember(blockPrivate: boolean, host: string, verdict: ResolvedTarget | DestinationRefused) {
  if (literalVerdicts.size >= 1000) literalVerdicts.clear();
  literalVerdicts.set(`${blockPrivate ? 1 : 0}${host}`, verdict);
}

/** Resolution failed: a connection-class failure, retried like any other. */
export class DnsFailure extends Error {}
