import type { Context } from "hono";
import { AppError } from "../../contracts/errors";

/**
 * A request body that stops arriving (docs/api.md, "Stalled uploads"): a
 * client that announces `Content-Length: 100` and sends 6 bytes would
 * otherwise hold its request until Bun's idle timeout closes the socket
 * without an answer. Each read of the body must bring bytes within
 * `timeoutMs`; past that the read fails with a 408 `request_timeout`, which
 * the error handler answers (with `Connection: close`: the rest of that body
 * will not be read). A slow body that keeps moving is never cut.
 */
export function bodyProgressTimeout(timeoutMs: number) {
  return async (c: Context, next: () => Promise<void>) => {
    const body = c.req.raw.body;
    if (body && c.req.method !== "GET" && c.req.method !== "HEAD") {
      c.req.raw = new Request(c.req.raw, { body: withProgressDeadline(body, timeoutMs), duplex: "half" } as RequestInit);
    }
    await next();
  };
}

export const stalledBody = (timeoutMs: number) => new AppError("request_timeout", `The request body stopped arriving: no bytes for ${timeoutMs / 1000} s`);

function withProgressDeadline(body: ReadableStream<Uint8Array>, timeoutMs: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(stalledBody(timeoutMs)), timeoutMs);
      });
      try {
        const { done, value } = await Promise.race([reader.read(), stalled]);
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        reader.cancel().catch(() => {});
        controller.error(error);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
