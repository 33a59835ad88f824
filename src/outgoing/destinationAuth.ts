import type { DestinationAuth } from "../contracts/destinations";

/**
 * Applies a destination's auth (loadDestinationForDelivery().auth) to an
 * outgoing request: basic and bearer set Authorization, api_key sets its
 * header or query parameter. Returns new values; the inputs are not changed.
 */
export function applyDestinationAuth(url: string, headers: Record<string, string>, auth: DestinationAuth): { url: string; headers: Record<string, string> } {
  switch (auth.type) {
    case "none":
      return { url, headers };
    case "basic":
      return { url, headers: { ...headers, authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`, "utf8").toString("base64")}` } };
    case "bearer":
      return { url, headers: { ...headers, authorization: `Bearer ${auth.token}` } };
    case "api_key": {
      if (auth.to === "query") {
        const u = new URL(url);
        u.searchParams.set(auth.key, auth.api_key);
        return { url: u.toString(), headers };
      }
      return { url, headers: { ...headers, [auth.key.toLowerCase()]: auth.api_key } };
    }
  }
}
