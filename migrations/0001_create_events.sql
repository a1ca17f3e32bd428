-- The audit trail: one append-only table of hash-chained events.
-- docs/trail-format.md specifies how `hash` is computed from the other columns.

CREATE TABLE events (
    seq              INTEGER PRIMARY KEY NOT NULL,  -- contiguous from 1
    event_id         TEXT    NOT NULL,              -- UUID v7, unique by construction
    ts               TEXT    NOT NULL,              -- RFC 3339 UTC, microseconds
    kind             TEXT    NOT NULL,
    decision_id      TEXT,
    session_id       TEXT,
    task_type        TEXT,
    actor_id         TEXT,
    actor_kind       TEXT,
    tool             TEXT,
    action           TEXT,
    resource_type    TEXT,
    resource_id      TEXT,
    args_hash        TEXT,
    rewritten_args_hash TEXT,                       -- with outcome rewrite: hash of the arguments to run
    outcome          TEXT,
    reason           TEXT,
    policy_ids       TEXT,                          -- JSON array of policy ids
    policy_version   TEXT,
    shadow_outcome   TEXT,                          -- the candidate (shadow) policy's outcome
    shadow_reason    TEXT,
    max_output_chars INTEGER,
    timeout_ms       INTEGER,
    duration_us      INTEGER,
    result_bytes     INTEGER,
    truncated        INTEGER,
    status           TEXT,
    error            TEXT,
    request          TEXT,                          -- normalized request, arguments by hash only
    prev_hash        TEXT    NOT NULL,
    hash             TEXT    NOT NULL
) STRICT;

CREATE INDEX events_session  ON events (session_id, seq);
CREATE INDEX events_actor    ON events (actor_id, seq);
CREATE INDEX events_tool     ON events (tool, seq);
CREATE INDEX events_ts       ON events (ts);
CREATE INDEX events_decision ON events (decision_id);

-- Append-only: rows can be inserted, never changed or removed. `INSERT OR REPLACE` over an
-- existing seq would delete the old row without firing the DELETE trigger (unless the
-- connection turned recursive_triggers on), so a third trigger refuses any insert whose seq is
-- taken. seq is the only unique key, so it is the only conflict REPLACE could resolve.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: update refused');
END;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: delete refused');
END;

CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq)
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: replace refused');
END;
