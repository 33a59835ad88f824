const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The body as UTF-8 text, or null when it is not valid UTF-8. */
export function utf8OrNull(body: Uint8Array): string | null {
  try {
    return decoder.decode(body);
  } catch {
    return null;
  }
}

const NOT_JSON = Symbol("not json");

/** Parses the body as JSON at most once, on first use; `undefined` when it is not JSON. */
export function lazyJson(body: Uint8Array): () => unknown {
  let value: unknown = NOT_JSON;
  let parsed = false;
  return () => {
    if (!parsed) {
      parsed = true;
      const text = utf8OrNull(body);
      if (text !== null) {
        try {
          value = JSON.parse(text);
        } catch {}
      }
    }
    return value === NOT_JSON ? undefined : value;
  };
}

/** `data.id` into a parsed body; array indexes are path segments too (`items.0.id`). */
export function atPath(value: unknown, path: string): unknown {
  let cur = value;
  for (const seg of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}
