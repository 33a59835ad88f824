import { parseAddress, parseIpRange, inRanges } from "../rules/ipFilter";

type Trust = (addr: string) => boolean;

const cache = new Map<string, Trust>();

/** HOOKRELAY_TRUST_PROXY: empty (trust nobody), `true` (any peer), or a comma list of CIDRs/addresses. */
export function trustedProxies(setting: string): Trust {
  let trust = cache.get(setting);
  if (!trust) {
    const v = setting.trim().toLowerCase();
    if (v === "" || v === "false") trust = () => false;
    else if (v === "true" || v === "*") trust = () => true;
    else {
      const ranges = v.split(",").map(parseIpRange).filter((r) => r !== null);
      trust = (ip) => {
        const addr = parseAddress(ip);
        return addr !== null && inRanges(addr, ranges);
      };
    }
    cache.set(setting, trust);
  }
  return trust;
}

/**
 * The client's address: the socket peer, unless the peer is a trusted proxy;
 * then the right-most X-Forwarded-For entry that is not itself a trusted proxy
 * (entries left of it could be made up by the client).
 */
export function clientIp(peer: string | null, forwardedFor: string | undefined, trustSetting: string): string | null {
  // The common case (no proxy configured) skips parsing: the socket address is already canonical.
  if (!forwardedFor || trustSetting === "") return peer === null ? null : unmapIPv4(peer);
  const peerAddr = normalize(peer);
  if (!peerAddr) return peerAddr;
  const trust = trustedProxies(trustSetting);
  if (!trust(peerAddr)) return peerAddr;
  let current = peerAddr;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalize(hops[i]!);
    // A malformed hop: nothing left of it can be trusted, the last proxy is all we know.
    if (!hop) return current;
    current = hop;
    if (!trust(hop)) return hop;
  }
  return current;
}

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) is `1.2.3.4`. */
function unmapIPv4(addr: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(addr) ? addr.slice(7) : addr;
}

function normalize(raw: string | null): string | null {
  const addr = parseAddress(raw);
  return addr ? addr.toString() : null;
}
