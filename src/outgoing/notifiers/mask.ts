import { MASK } from "../../contracts/notificationChannels";

/** A chat webhook URL with its token (the last path segment) masked: the host and ids still say which one it is. */
export function maskUrlToken(raw: string): string {
  try {
    const u = new URL(raw);
    const parts = u.pathname.split("/");
    const last = parts.findLastIndex((p) => p !== "");
    if (last < 0) return raw;
    parts[last] = MASK;
    u.pathname = parts.join("/");
    u.search = "";
    return u.toString();
  } catch {
    return MASK;
  }
}

/** An SMTP URL with its password masked. */
export function maskUrlPassword(raw: string): string {
  try {
    const u = new URL(raw);
    if (!u.password) return raw;
    u.password = MASK;
    return u.toString();
  } catch {
    return MASK;
  }
}
