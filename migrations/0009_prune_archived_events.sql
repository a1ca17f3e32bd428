-- Retention (docs/operations.md, "Retention"): events that are archived, verified there and
-- covered by a signed checkpoint may leave the file. A prune is an event on the chain (kind
-- `prune`) and a row here, committed together; the row is what lets the rows at or below
-- `through` be deleted, and nothing above it. The tree keeps its frontier at `through` (the
-- nodes every later root and proof is made from), so the chain and the tree go on as before.
CREATE TABLE pruned (
    through INTEGER PRIMARY KEY NOT NULL,  -- the last seq pruned
    seq     INTEGER NOT NULL,              -- the `prune` event that recorded it
    hash    TEXT    NOT NULL               -- the chain hash of event `through`
) STRICT;

CREATE TRIGGER pruned_no_update BEFORE UPDATE ON pruned
BEGIN
    SELECT RAISE(ABORT, 'prunes are append-only: update refused');
END;

CREATE TRIGGER pruned_no_delete BEFORE DELETE ON pruned
BEGIN
    SELECT RAISE(ABORT, 'prunes are append-only: delete refused');
END;

DROP TRIGGER events_no_delete;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
WHEN OLD.seq > coalesce((SELECT max(through) FROM pruned), 0)
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: delete refused');
END;

-- Leaf index = seq - 1: a node completed by a leaf below `through` may go (the prune keeps
-- the frontier's nodes by not deleting them).
DROP TRIGGER tree_nodes_no_delete;
CREATE TRIGGER tree_nodes_no_delete BEFORE DELETE ON tree_nodes
WHEN OLD.leaf >= coalesce((SELECT max(through) FROM pruned), 0)
BEGIN
    SELECT RAISE(ABORT, 'tree nodes are append-only: delete refused');
END;
