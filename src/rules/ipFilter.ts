import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/**
 * One allow/deny entry: an IPv4 or IPv6 CIDR, or a bare address (a /32 or
 * /128). IPv4 must be four dotted decimals: ipaddr.js would otherwise take
 * `10.1` or `0x0a.0.0.1` too, which nobody means in a list.
 */
export function parseIpRange(entry: string): Range | null {
  const s = entry.trim();
  if (s.includes("/")) {
    if (ipaddr.IPv4.isValidCIDRFourPartDecimal(s)) return ipaddr.IPv4.parseCIDR(s);
    if (ipaddr.IPv6.isValidCIDR(s)) return ipaddr.IPv6.parseCIDR(s);
    return null;
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return [ipaddr.IPv4.parse(s), 32];
  if (ipaddr.IPv6.isValid(s)) return [ipaddr.IPv6.parse(s), 128];
  return null;
}

/** The positions of entries that are not addresses or CIDRs. */
export function invalidIpEntries(list: readonly string[]): number[] {
  return list.flatMap((e, i) => (parseIpRange(e) ? [] : [i]));
}

/** An address as compared: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is the IPv4 address. */
export function parseAddress(raw: string | null | undefined): Address | null {
  if (!raw) return null;
  const s = raw.trim().replace(/^\[(.*)\]$/, "$1");
  if (!ipaddr.isValid(s)) return null;
  try {
    return ipaddr.process(s);
  } catch {
    return null;
  }
}

export function inRanges(addr: Address, ranges: readonly Range[]): boolean {
  for (const [net, bits] of ranges) {
    if (addr.kind() === net.kind()) {
      if (addr.match(net, bits)) return true;
    } else if (addr.kind() === "ipv4" && net.kind() === "ipv6") {
      if ((addr as ipaddr.IPv4).toIPv4MappedAddress().match(net, bits)) return true;
    }
  }
  return false;
}

const toRanges = (list: readonly string[] | null) => (list ?? []).map(parseIpRange).filter((r): r is Range => r !== null);

/**
 * The source's filter: the denylist wins; a non-empty allowlist admits only
 * its members. An unknown peer address is admitted only when no allowlist is set.
 */
export function compileIpFilter(allow: readonly string[] | null, deny: readonly string[] | null): (ip: string | null) => boolean {
  const allowed = toRanges(allow);
  const denied = toRanges(deny);
  if (allowed.length === 0 && denied.length === 0) return () => true;
  return (ip) => {
    const addr = parseAddress(ip);
    if (!addr) return allowed.length === 0;
    if (inRanges(addr, denied)) return false;
    return allowed.length === 0 || inRanges(addr, allowed);
  };
}
