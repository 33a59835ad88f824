/** Server-Sent Events from a byte stream: yields {event, data, id} per message; comments (pings) are skipped. */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<{ event?: string; data: string; id?: string }> {
  const decoder = new TextDecoder();
  let buf = "";
  let msg: { event?: string; data: string[]; id?: string } = { data: [] };
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.search(/\r?\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === "\r" ? 2 : 1));
      if (line === "") {
        if (msg.data.length > 0 || msg.event) yield { event: msg.event, data: msg.data.join("\n"), id: msg.id };
        msg = { data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") msg.data.push(value);
      else if (field === "event") msg.event = value;
      else if (field === "id") msg.id = value;
    }
  }
}
