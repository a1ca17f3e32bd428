-- Execute may name its decision by the idempotency key the harness gave at Decide (for
-- example a Claude Code hook's tool_use_id) instead of by decision_id. The key is part of the
-- stored request; this index finds the decision by it without a scan, and leaves the columns
-- (and so every hash) as they are. Only decisions that have a key are indexed.
CREATE INDEX events_idempotency_key
    ON events (json_extract(request, '$.plan.idempotency_key'))
    WHERE kind = 'decision' AND json_extract(request, '$.plan.idempotency_key') != '';
