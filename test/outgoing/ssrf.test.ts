import { describe, expect, it } from "vitest";
import { DestinationRefused, refusalReason, resolveAllowedTarget } from "../../src/outgoing/ssrf";

describe("refusalReason", () => {
  it("always refuses link-local and cloud metadata addresses, in every spelling", () => {
    for (const a of ["169.254.169.254", "169.254.0.1", "fe80::1", "febf::1", "::ffff:169.254.169.254", "fd00:ec2::254"]) {
      expect(refusalReason(a, false), a).not.toBeNull();
    }
  });

  it("allows loopback and private ranges by default (homelab destinations), refuses them when asked", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "192.168.1.10", "172.16.0.1", "::1", "fd12::1", "100.64.0.1", "0.0.0.0"]) {
      expect(refusalReason(a, false), a).toBeNull();
      expect(refusalReason(a, true), a).not.toBeNull();
    }
  });

  it("refuses NAT64 and IPv4-compatible spellings of a refused or non-global address even when private destinations are allowed", () => {
    for (const a of ["::7f00:1", "::127.0.0.1", "::a00:1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::a00:1", "::ffff:a9fe:a9fe", "::ffff:0:7f00:1"]) {
      expect(refusalReason(a, false), a).not.toBeNull();
    }
    expect(refusalReason("64:ff9b::7f00:1", false)).toBe("a NAT64 address of 127.0.0.1, a loopback address");
    // NAT64 of a public address is how an IPv6-only host reaches it through DNS64: allowed unless private destinations are blocked.
    expect(refusalReason("64:ff9b::5db8:d822", false)).toBeNull();
    expect(refusalReason("64:ff9b::5db8:d822", true)).not.toBeNull();
  });

  it("refuses every non-global range under the block: mapped, NAT64, 6to4, Teredo, multicast, reserved, broadcast", () => {
    for (const a of ["::ffff:7f00:1", "::ffff:5db8:d822", "2002:7f00:1::", "2001::1", "64:ff9b:1::1", "224.0.0.1", "255.255.255.255", "192.0.2.1", "198.18.0.1", "ff02::1", "2001:db8::1", "::"]) {
      expect(refusalReason(a, true), a).not.toBeNull();
    }
  });

  it("allows public addresses either way", () => {
    for (const a of ["93.184.216.34", "2606:4700::1111", "8.8.8.8"]) {
      expect(refusalReason(a, true)).toBeNull();
    }
  });
});

describe("resolveAllowedTarget", () => {
  it("checks what a name resolves to, every address of it", async () => {
    const resolve = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "169.254.169.254", family: 4 },
    ];
    await expect(resolveAllowedTarget(new URL("http://metadata.example/"), false, resolve)).rejects.toThrow(DestinationRefused);
    await expect(resolveAllowedTarget(new URL("http://metadata.example/"), false, resolve)).rejects.toThrow(/metadata\.example resolves to 169\.254\.169\.254, a link-local/);
    const ok = await resolveAllowedTarget(new URL("http://fine.example/"), true, async () => [{ address: "93.184.216.34", family: 4 }]);
    expect(ok).toEqual({ address: "93.184.216.34", family: 4, literal: false });
  });

  it("takes IP literals as they are, IPv6 in brackets too", async () => {
    await expect(resolveAllowedTarget(new URL("http://[fe80::1]:8080/"), false)).rejects.toThrow(/fe80::1 is a link-local/);
    // The URL parser spells them [::7f00:1] and [64:ff9b::7f00:1]: still refused.
    await expect(resolveAllowedTarget(new URL("http://[::127.0.0.1]/"), false)).rejects.toThrow(DestinationRefused);
    await expect(resolveAllowedTarget(new URL("http://[64:ff9b::7f00:1]/"), false)).rejects.toThrow(/NAT64 address of 127\.0\.0\.1/);
    await expect(resolveAllowedTarget(new URL("http://0x7f.1/"), true)).rejects.toThrow(/127\.0\.0\.1 is a loopback/);
    expect(await resolveAllowedTarget(new URL("http://127.0.0.1:1/"), false)).toEqual({ address: "127.0.0.1", family: 4, literal: true });
  });
});
