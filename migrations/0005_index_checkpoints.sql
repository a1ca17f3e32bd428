-- Verification reads every checkpoint on the trail; this partial index holds only them, so
-- it costs the other appends nothing.
CREATE INDEX events_checkpoints ON events (seq) WHERE kind = 'checkpoint';
