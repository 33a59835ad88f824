import { ExportResultCode, type ExportResult } from "@opentelemetry/core";

/** As the official exporter's default (OTEL_EXPORTER_OTLP_TIMEOUT): an export that takes longer has failed. */
export const EXPORT_TIMEOUT_MS = 10_000;

/**
 * One OTLP/HTTP JSON export request (./otlpJson.ts wrote its body), sent
 * with Bun's `fetch`, whose connections are kept alive and reused, instead
 * of the official exporter's node:http client and its retry machinery: that
 * client cost about 11 µs of CPU per span, `fetch` about 0.5
 * (docs/performance.md, "Tracing", fourth round). No retry: a batch the
 * collector does not take is answered as failed, and its spans are counted
 * as dropped by the caller (./spanQueue.ts); the next batch tries again.
 */
export async function postOtlpJson(url: string, headers: Record<string, string>, body: Uint8Array<ArrayBuffer>, timeoutMs = EXPORT_TIMEOUT_MS): Promise<ExportResult> {
  try {
    // No redirect followed (as the official exporter): the headers may hold a collector's key, for that collector only.
    const res = await fetch(url, { method: "POST", body, headers: { ...headers, "content-type": "application/json" }, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    // Read to the end, so the connection goes back to the pool.
    await res.arrayBuffer();
    if (res.ok) return { code: ExportResultCode.SUCCESS };
    return { code: ExportResultCode.FAILED, error: new Error(`the collector answered ${res.status}`) };
  } catch (error) {
    return { code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) };
  }
}
