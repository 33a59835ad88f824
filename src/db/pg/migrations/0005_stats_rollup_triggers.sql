-- Hourly rollups for GET /v1/stats (src/db/schema/rollups.ts): statement triggers with transition
-- tables, one grouped upsert per statement into the backend's shard, taken in key order, as the list
-- counters of 0003_list_count_triggers.sql are. A delete takes back counts and sums, not min_ms/max_ms
-- (least/greatest ignore its NULLs; bounded by the bucket). Then the duration buckets and the rollups of
-- the rows already stored.
INSERT INTO duration_buckets (lower_ms) VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (19), (23), (27), (32), (38), (45), (54), (64), (76), (91), (108), (128), (152), (181), (215), (256), (304), (362), (431), (512), (609), (724), (861), (1024), (1218), (1448), (1722), (2048), (2435), (2896), (3444), (4096), (4871), (5793), (6889), (8192), (9742), (11585), (13777), (16384), (19484), (23170), (27554), (32768), (38968), (46341), (55109), (65536), (77936), (92682), (110218), (131072), (155872), (185364), (220436), (262144), (311744), (370728), (440872), (524288), (623487), (741455), (881744), (1048576), (1246974), (1482910), (1763488), (2097152), (2493948), (2965821), (3526975), (4194304), (4987896), (5931642), (7053950), (8388608), (9975792), (11863283), (14107901);
--> statement-breakpoint
CREATE FUNCTION event_hours_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO event_hours (org_id, env_id, hour, status, shard, n)
      SELECT org_id, env_id, substr(received_at, 1, 13), status, pg_backend_pid() % 1024, count(*) FROM new_rows GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT (org_id, env_id, hour, status, shard) DO UPDATE SET n = event_hours.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO event_hours (org_id, env_id, hour, status, shard, n)
      SELECT org_id, env_id, substr(received_at, 1, 13), status, pg_backend_pid() % 1024, -count(*) FROM old_rows GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT (org_id, env_id, hour, status, shard) DO UPDATE SET n = event_hours.n + excluded.n;
  ELSE
    INSERT INTO event_hours (org_id, env_id, hour, status, shard, n)
      SELECT org_id, env_id, hour, status, pg_backend_pid() % 1024, sum(d) FROM (
        SELECT org_id, env_id, substr(received_at, 1, 13) AS hour, status, 1 AS d FROM new_rows
        UNION ALL
        SELECT org_id, env_id, substr(received_at, 1, 13) AS hour, status, -1 AS d FROM old_rows
      ) AS changed GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
      ON CONFLICT (org_id, env_id, hour, status, shard) DO UPDATE SET n = event_hours.n + excluded.n;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_hour_insert AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION event_hours_apply();
--> statement-breakpoint
CREATE TRIGGER events_hour_delete AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION event_hours_apply();
--> statement-breakpoint
CREATE TRIGGER events_hour_update AFTER UPDATE ON events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION event_hours_apply();
--> statement-breakpoint
INSERT INTO event_hours (org_id, env_id, hour, status, shard, n)
  SELECT org_id, env_id, substr(received_at, 1, 13), status, 0, count(*) FROM events GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
CREATE FUNCTION attempt_hours_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
      SELECT org_id, env_id, hour, destination_id, status, bucket, pg_backend_pid() % 1024, count(*), coalesce(sum(duration_ms), 0), min(duration_ms), max(duration_ms)
      FROM (SELECT org_id, env_id, substr(sent_at, 1, 13) AS hour, destination_id, status, CASE WHEN duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= duration_ms), 0) END AS bucket, duration_ms FROM new_rows WHERE status IN ('success', 'failed') AND sent_at IS NOT NULL) AS added GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
      ON CONFLICT (org_id, env_id, hour, destination_id, status, bucket, shard) DO UPDATE SET n = attempt_hours.n + excluded.n, sum_ms = attempt_hours.sum_ms + excluded.sum_ms,
        min_ms = least(attempt_hours.min_ms, excluded.min_ms), max_ms = greatest(attempt_hours.max_ms, excluded.max_ms);
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
      SELECT org_id, env_id, hour, destination_id, status, bucket, pg_backend_pid() % 1024, -count(*), -coalesce(sum(duration_ms), 0), NULL::bigint, NULL::bigint
      FROM (SELECT org_id, env_id, substr(sent_at, 1, 13) AS hour, destination_id, status, CASE WHEN duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= duration_ms), 0) END AS bucket, duration_ms FROM old_rows WHERE status IN ('success', 'failed') AND sent_at IS NOT NULL) AS removed GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
      ON CONFLICT (org_id, env_id, hour, destination_id, status, bucket, shard) DO UPDATE SET n = attempt_hours.n + excluded.n, sum_ms = attempt_hours.sum_ms + excluded.sum_ms,
        min_ms = least(attempt_hours.min_ms, excluded.min_ms), max_ms = greatest(attempt_hours.max_ms, excluded.max_ms);
  ELSE
    INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
      SELECT org_id, env_id, hour, destination_id, status, bucket, pg_backend_pid() % 1024, sum(d), sum(d * coalesce(duration_ms, 0)),
        min(duration_ms) FILTER (WHERE d > 0), max(duration_ms) FILTER (WHERE d > 0)
      FROM (
        SELECT org_id, env_id, substr(sent_at, 1, 13) AS hour, destination_id, status, CASE WHEN duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= duration_ms), 0) END AS bucket, duration_ms, 1 AS d FROM new_rows WHERE status IN ('success', 'failed') AND sent_at IS NOT NULL
        UNION ALL
        SELECT org_id, env_id, substr(sent_at, 1, 13) AS hour, destination_id, status, CASE WHEN duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= duration_ms), 0) END AS bucket, duration_ms, -1 AS d FROM old_rows WHERE status IN ('success', 'failed') AND sent_at IS NOT NULL
      ) AS changed GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(d) <> 0 OR sum(d * coalesce(duration_ms, 0)) <> 0 ORDER BY 1, 2, 3, 4, 5, 6
      ON CONFLICT (org_id, env_id, hour, destination_id, status, bucket, shard) DO UPDATE SET n = attempt_hours.n + excluded.n, sum_ms = attempt_hours.sum_ms + excluded.sum_ms,
        min_ms = least(attempt_hours.min_ms, excluded.min_ms), max_ms = greatest(attempt_hours.max_ms, excluded.max_ms);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER attempts_hour_insert AFTER INSERT ON delivery_attempts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION attempt_hours_apply();
--> statement-breakpoint
CREATE TRIGGER attempts_hour_delete AFTER DELETE ON delivery_attempts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION attempt_hours_apply();
--> statement-breakpoint
CREATE TRIGGER attempts_hour_update AFTER UPDATE ON delivery_attempts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION attempt_hours_apply();
--> statement-breakpoint
INSERT INTO attempt_hours (org_id, env_id, hour, destination_id, status, bucket, shard, n, sum_ms, min_ms, max_ms)
  SELECT org_id, env_id, hour, destination_id, status, bucket, 0, count(*), coalesce(sum(duration_ms), 0), min(duration_ms), max(duration_ms)
  FROM (SELECT org_id, env_id, substr(sent_at, 1, 13) AS hour, destination_id, status, CASE WHEN duration_ms IS NULL THEN -1 ELSE coalesce((SELECT max(lower_ms) FROM duration_buckets WHERE lower_ms <= duration_ms), 0) END AS bucket, duration_ms FROM delivery_attempts WHERE status IN ('success', 'failed') AND sent_at IS NOT NULL) AS finished GROUP BY 1, 2, 3, 4, 5, 6;
