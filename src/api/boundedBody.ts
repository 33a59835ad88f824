import { AppError } from "../contracts/errors";
import { stalledBody } from "./middleware/bodyTimeout";

const EMPTY = new Uint8Array(0);

export const bodyTooLarge = (maxBytes: number) => new AppError("payload_too_large", `Request body exceeds ${maxBytes} bytes`);

/**
 * Reads a request body straight from Bun's stream with the two checks the
 * app's middleware makes (src/api/middleware/bodyTimeout.ts and hono's body
 * limit), done once here: at most `maxBytes` (413 `payload_too_large`, also
 * when no Content-Length was sent), and each chunk within `timeoutMs` of the
 * previous one (408 `request_timeout`: a body that keeps moving is never
 * cut). One timer per request, pushed back as bytes arrive, instead of a
 * wrapping stream and a timer per read.
 */
export async function readBoundedBody(req: Request, maxBytes: number, timeoutMs: number): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw bodyTooLarge(maxBytes);
  const stream = req.body;
  if (!stream) return EMPTY;
  const reader = stream.getReader();
  let fail!: (error: unknown) => void;
  const stalled = new Promise<never>((_, reject) => (fail = reject));
  stalled.catch(() => {});
  const timer = setTimeout(() => fail(stalledBody(timeoutMs)), timeoutMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), stalled]);
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw bodyTooLarge(maxBytes);
      chunks.push(value);
      timer.refresh();
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}
