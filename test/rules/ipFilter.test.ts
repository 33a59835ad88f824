import { describe, expect, it } from "vitest";
import { clientIp } from "../../src/ingest/clientIp";
import { compileIpFilter, invalidIpEntries, parseIpRange } from "../../src/rules/ipFilter";

describe("parseIpRange", () => {
  it("accepts IPv4/IPv6 CIDRs and bare addresses, nothing loose", () => {
    for (const ok of ["10.0.0.0/8", "192.168.1.7", "0.0.0.0/0", "::/0", "2001:db8::/32", "::1", "fe80::1", "::ffff:10.0.0.1"]) expect(parseIpRange(ok), ok).not.toBeNull();
    for (const bad of ["", "10.1", "10.0.0.0/33", "300.1.1.1", "0x0a.0.0.1", "10.0.0.0/", "2001:db8::/129", "abc", "1.2.3.4/8/8", "1.2.3.4 5"]) expect(parseIpRange(bad), bad).toBeNull();
    expect(invalidIpEntries(["1.1.1.1", "x", "2.2.2.0/24", "y"])).toEqual([1, 3]);
  });
});

describe("compileIpFilter", () => {
  it("admits everyone without lists, lets the denylist win and the allowlist restrict", () => {
    expect(compileIpFilter(null, null)("8.8.8.8")).toBe(true);
    const f = compileIpFilter(["10.0.0.0/8", "2001:db8::/32"], ["10.6.6.6"]);
    expect(f("10.1.2.3")).toBe(true);
    expect(f("10.6.6.6")).toBe(false);
    expect(f("11.0.0.1")).toBe(false);
    expect(f("2001:db8::1")).toBe(true);
    expect(f("2001:db9::1")).toBe(false);
    expect(f("::ffff:10.1.2.3")).toBe(true);
    expect(f(null)).toBe(false);
    expect(compileIpFilter([], ["1.1.1.1"])(null)).toBe(true);
    expect(compileIpFilter([], ["::ffff:0:0/96"])("1.2.3.4")).toBe(false);
  });
});

describe("clientIp", () => {
  it("is the peer unless the peer is a trusted proxy", () => {
    expect(clientIp("127.0.0.1", "9.9.9.9", "")).toBe("127.0.0.1");
    expect(clientIp("127.0.0.1", "9.9.9.9", "true")).toBe("9.9.9.9");
    expect(clientIp("10.0.0.2", "1.1.1.1, 9.9.9.9, 10.0.0.5", "10.0.0.0/8")).toBe("9.9.9.9");
    expect(clientIp("10.0.0.2", "10.0.0.9, 10.0.0.5", "10.0.0.0/8")).toBe("10.0.0.9");
    expect(clientIp("10.0.0.2", "junk, 10.0.0.5", "10.0.0.0/8")).toBe("10.0.0.5");
    expect(clientIp("::ffff:127.0.0.1", undefined, "")).toBe("127.0.0.1");
    expect(clientIp(null, "1.1.1.1", "true")).toBeNull();
    expect(clientIp("10.0.0.2", "[2001:db8::1]", "true")).toBe("2001:db8::1");
  });
});
