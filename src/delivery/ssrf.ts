import ipaddr from "ipaddr.js";
import { lookup } from "node:dns/promises";
import { describeNetworkError } from "./networkErrors";

/**
 * The SSRF guard: destination URLs are user input, and the relay runs inside
 * someone's network. Checked after DNS resolution, so a hostname that
 * resolves to a forbidden address is refused just like the literal address.
 *
 * - Always refused: link-local (169.254.0.0/16 — where cloud metadata
 *   services live — and fe80::/10), plus the well-known IPv6 metadata address.
 * - Refused only with HOOKRELAY_BLOCK_PRIVATE_DESTINATIONS: loopback, RFC 1918
 *   private, carrier-grade NAT, IPv6 unique-local and unspecified addresses.
 *   Allowed by default because homelab destinations live there.
 */
export class DestinationRefused extends Error {}

const ALWAYS_BLOCKED = new Set(["linkLocal"]);
const PRIVATE = new Set(["loopback", "private", "carrierGradeNat", "uniqueLocal", "unspecified"]);
/** AWS's IPv6 instance-metadata endpoint sits in unique-local space; it is metadata all the same. */
const METADATA_V6 = ipaddr.parse("fd00:ec2::254").toNormalizedString();

const RANGE_NAMES: Record<string, string> = {
  linkLocal: "link-local (cloud metadata)",
  loopback: "loopback",
  private: "private",
  carrierGradeNat: "carrier-grade NAT",
  uniqueLocal: "unique-local",
  unspecified: "unspecified",
};

/** Why `address` may not be contacted ("a link-local … address"), or null when it may. */
export function refusalReason(address: string, blockPrivate: boolean): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address); // folds ::ffff:a.b.c.d into IPv4, so the mapped form cannot sneak past
  } catch {
    return "not an IP address";
  }
  if (ip.kind() === "ipv6" && ip.toNormalizedString() === METADATA_V6) return "a cloud metadata address";
  const range = ip.range();
  if (ALWAYS_BLOCKED.has(range) || (blockPrivate && PRIVATE.has(range))) {
    return `a ${RANGE_NAMES[range] ?? range} address`;
  }
  return null;
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
