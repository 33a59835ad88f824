-- Hourly rollups for GET /v1/stats (src/db/schema/rollups.ts), kept by row triggers in the writing
-- transaction, as the list counters of 0012_list_count_triggers.sql are: one upsert per event written,
-- two per status change, one per finished attempt. Then the duration buckets and the rollups of the
-- rows already stored. A delete takes back counts and sums, not min_ms/max_ms (bounded by the bucket).
INSERT INTO duration_buckets (lower_ms) VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (19), (23), (27), (32), (38), (45), (54), (64), (76), (91), (108), (128), (152), (181), (215), (256), (304), (362), (431), (512), (609), (724), (861), (1024), (1218), (1448), (1722), (2048), (2435), (2896), (3444), (4096), (4871), (5793), (6889), (8192), (9742), (11585), (13777), (16384), (19484), (23170), (27554), (32768), (38968), (46341), (55109), (65536), (77936), (92682), (110218), (131072), (155872), (185364), (220436), (262144), (311744), (370728), (440872), (524288), (623487), (741455), (881744), (1048576), (1246974), (1482910), (1763488), (2097152), (2493948), (2965821), (3526975), (4194304), (4987896), (5931642), (7053950), (8388608), (9975792), (11863283), (14107901);
--> statement-breakpoint
CREATE TRIGGER events_hour_insert AFTER INSERT ON events BEGIN
  INSERT INTO event_hours (org_id, env_id, hour, status, shard, n) VALUES (new.org_id, new.env_id, substr(new.received_at, 1, 13), new.status, 0, 1)
    ON CONFLICT (org_id, env_id, hour, status, shard) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER events_hour_delete AFTER DELETE ON events BEGIN
  INSERT INTO event_hours (org_id, env_id, hour, status, shard, n) VALUES (old.org_id, old.env_id, substr(old.received_at, 1, 13), old.status, 0, -1)
    ON CONFLICT (org_id, env_id, hour, status, shard) DO UPDATE SET n = n - 1;
END;
--> statement-breakpoint
CREATE TRIGGER events_hour_update AFTER UPDATE OF org_id, env_id, received_at, status ON events
  WHEN old.org_id IS NOT new.org_id OR old.env_id IS NOT new.env_id OR old.received_at IS NOT new.received_at OR old.status IS NOT new.status
BEGIN
  INSERT INTO event_hours (org_id, env_id, hour, status, shard, n) VALUES (old.org_id, old.env_id, substr(old.received_at, 1, 13), old.status, 0, -1)
    ON CONFLICT (org_id, env_id, hour, status, shard) DO UPDATE SET n = n - 1;
  INSERT INTO event_hours (org_id, env_id, hour, status, shard, n) VALUES (new.org_id, new.env_id, substr(new.received_at, 1, 13), new.status, 0, 1)
    ON CONFLICT (org_id, env_id, hour, status, shard) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
INSERT INTO event_hours (org_id, env_id, hour, status, shard, n)
  SELECT org_id, env_id, substr(received_at, 1, 13), status, 0, count(*) FROM events GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
CREATE TRIGGER attempts_hour_insert AFTER INSERT ON delivery_attempts WHEN new.status IN ('success', 'failed') AND new.sent_at IS NOT NULL BEGIN
  INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
    SELECT new.org_id, new.env_id, substr(new.sent_at, 1, 13), new.destination_id, new.status, CASE WHEN new.duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= new.duration_ms), 0) END, 0, 1, coalesce(new.duration_ms, 0), new.duration_ms, new.duration_ms WHERE true
    ON CONFLICT (org_id, env_id, hour, destination_id, status, bucket, shard) DO UPDATE SET n = n + 1, sum_ms = sum_ms + excluded.sum_ms, min_ms = min(min_ms, excluded.min_ms), max_ms = max(max_ms, excluded.max_ms);
END;
--> statement-breakpoint
CREATE TRIGGER attempts_hour_delete AFTER DELETE ON delivery_attempts WHEN old.status IN ('success', 'failed') AND old.sent_at IS NOT NULL BEGIN
  INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
    SELECT old.org_id, old.env_id, substr(old.sent_at, 1, 13), old.destination_id, old.status, CASE WHEN old.duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= old.duration_ms), 0) END, 0, -1, -coalesce(old.duration_ms, 0), NULL, NULL WHERE true
    ON CONFLICT (org_id, env_id, hour, destination_id, status, bucket, shard) DO UPDATE SET n = n - 1, sum_ms = sum_ms + excluded.sum_ms;
END;
--> statement-breakpoint
CREATE TRIGGER attempts_hour_update AFTER UPDATE OF org_id, env_id, destination_id, status, sent_at, duration_ms ON delivery_attempts
  WHEN (old.status IN ('success', 'failed') AND old.sent_at IS NOT NULL OR new.status IN ('success', 'failed') AND new.sent_at IS NOT NULL)
    AND (old.org_id IS NOT new.org_id OR old.env_id IS NOT new.env_id OR old.destination_id IS NOT new.destination_id OR old.status IS NOT new.status OR old.sent_at IS NOT new.sent_at OR old.duration_ms IS NOT new.duration_ms)
BEGIN
  INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
    SELECT old.org_id, old.env_id, substr(old.sent_at, 1, 13), old.destination_id, old.status, CASE WHEN old.duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= old.duration_ms), 0) END, 0, -1, -coalesce(old.duration_ms, 0), NULL, NULL WHERE old.status IN ('success', 'failed') AND old.sent_at IS NOT NULL
    ON CONFLICT (org_id, env_id, hour, destination_id, status, bucket, shard) DO UPDATE SET n = n - 1, sum_ms = sum_ms + excluded.sum_ms;
  INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
    SELECT new.org_id, new.env_id, substr(new.sent_at, 1, 13), new.destination_id, new.status, CASE WHEN new.duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= new.duration_ms), 0) END, 0, 1, coalesce(new.duration_ms, 0), new.duration_ms, new.duration_ms WHERE new.status IN ('success', 'failed') AND new.sent_at IS NOT NULL
    ON CONFLICT (org_id, env_id, hour, destination_id, status, bucket, shard) DO UPDATE SET n = n + 1, sum_ms = sum_ms + excluded.sum_ms, min_ms = min(min_ms, excluded.min_ms), max_ms = max(max_ms, excluded.max_ms);
END;
--> statement-breakpoint
INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
  SELECT org_id, env_id, substr(sent_at, 1, 13), destination_id, status, bucket, 0, count(*), coalesce(sum(duration_ms), 0), min(duration_ms), max(duration_ms)
  FROM (SELECT a.*, CASE WHEN a.duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= a.duration_ms), 0) END AS bucket FROM delivery_attempts a WHERE a.status IN ('success', 'failed') AND a.sent_at IS NOT NULL)
  GROUP BY 1, 2, 3, 4, 5, 6;
