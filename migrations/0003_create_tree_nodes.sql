-- The trail's Merkle tree (RFC 6962; docs/trail-format.md): every perfect subtree, by level (0
-- for a leaf, whose data is the event's 32-byte chain hash) and index at that level. The
-- writer adds the nodes an event completes in the transaction that appends the event, so the
-- tree always covers exactly the committed events; any root or proof is made from O(log n)
-- rows. Append-only, like the events.
CREATE TABLE tree_nodes (
    level INTEGER NOT NULL,
    idx   INTEGER NOT NULL,
    hash  BLOB    NOT NULL,
    PRIMARY KEY (level, idx)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER tree_nodes_no_update BEFORE UPDATE ON tree_nodes
BEGIN
    SELECT RAISE(ABORT, 'tree nodes are append-only: update refused');
END;

CREATE TRIGGER tree_nodes_no_delete BEFORE DELETE ON tree_nodes
BEGIN
    SELECT RAISE(ABORT, 'tree nodes are append-only: delete refused');
END;
