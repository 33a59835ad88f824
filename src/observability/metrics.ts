import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * One registry per server instance (tests run several in one process).
 * Source and destination ids are never labels: their number is unbounded.
 * Every series carries the node's id (`node`), so a Prometheus scraping
 * each node of a cluster tells them apart, and sums across them.
 */
export function createMetrics(labels: { node?: string } = {}) {
  const registry = new Registry();
  if (labels.node) registry.setDefaultLabels({ node: labels.node });
  collectDefaultMetrics({ register: registry, prefix: "hookrelay_" });
  // Under Bun, v8.getHeapSpaceStatistics walks the whole JavaScriptCore heap: measured 30 ms per
  // scrape with a modest heap, a stall of ingest and deliveries every time Prometheus scrapes.
  // Heap totals stay (nodejs_heap_size_*_bytes, from process.memoryUsage(): cheap).
  for (const kind of ["total", "used", "available"]) registry.removeSingleMetric(`hookrelay_nodejs_heap_space_size_${kind}_bytes`);
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({ name: "hookrelay_http_requests_total", help: "HTTP requests by route and status", labelNames: ["method", "route", "status"], registers }),
    httpDuration: new Histogram({ name: "hookrelay_http_request_duration_seconds", help: "HTTP request duration", labelNames: ["route"], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers }),
    ingestRequests: new Counter({ name: "hookrelay_ingest_requests_total", help: "Ingest requests by outcome", labelNames: ["outcome"], registers }),
    ingestRejectedNotStored: new Counter({ name: "hookrelay_ingest_rejected_not_stored_total", help: "Rejected ingest requests past their source's stored budget: answered, not stored", labelNames: ["outcome"], registers }),
    ingestDuration: new Histogram({ name: "hookrelay_ingest_duration_seconds", help: "Ingest latency from request to acknowledgement", buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers }),
    deliveries: new Counter({ name: "hookrelay_deliveries_total", help: "Delivery attempts by outcome", labelNames: ["outcome"], registers }),
    deliveryDuration: new Histogram({ name: "hookrelay_delivery_duration_seconds", help: "Delivery request latency", buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers }),
    retriesScheduled: new Counter({ name: "hookrelay_delivery_retries_scheduled_total", help: "Failed attempts that scheduled a retry", registers }),
    deadLettered: new Counter({ name: "hookrelay_delivery_dlq_total", help: "Failed attempts that ended their chain in the DLQ", registers }),
    queueDepth: new Gauge({ name: "hookrelay_delivery_queue_depth", help: "Deliveries queued or in flight", registers }),
    sseClients: new Gauge({ name: "hookrelay_sse_clients", help: "Open event streams (GET /v1/events/stream)", registers }),
    sseDropped: new Counter({ name: "hookrelay_sse_dropped_total", help: "Event-stream clients dropped for not reading", registers }),
    oldestPendingSeconds: new Gauge({ name: "hookrelay_delivery_oldest_pending_seconds", help: "Age of the oldest due queued delivery", registers }),
    // Alerts (src/alerts): label values are the rule and channel types, a fixed set.
    alertsFired: new Counter({ name: "hookrelay_alerts_fired_total", help: "Alert rule triggers by rule type", labelNames: ["rule_type"], registers }),
    notificationsSent: new Counter({ name: "hookrelay_notifications_sent_total", help: "Alert notifications delivered, by channel type", labelNames: ["channel_type"], registers }),
    notificationsFailed: new Counter({ name: "hookrelay_notifications_failed_total", help: "Alert notifications that failed after their retries, by channel type", labelNames: ["channel_type"], registers }),
    // Tracing (src/observability/tracing.ts): spans the collector did not take or the full queue refused.
    spansDropped: new Counter({ name: "hookrelay_otel_spans_dropped_total", help: "Trace spans dropped: the export queue was full or the collector did not take them", registers }),
    openIssues: new Gauge({ name: "hookrelay_open_issues", help: "Issues with status open", registers }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
