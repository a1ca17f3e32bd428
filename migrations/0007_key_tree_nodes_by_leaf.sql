-- The tree's nodes keyed by the leaf whose append completed them, then by level, instead of by
-- level, then index. Node (level, idx) is completed by leaf ((idx + 1) << level) - 1, so `leaf`
-- and `level` name it as exactly as before. Keyed by level, each commit wrote a page at every
-- level the new leaves reached (13 to 24 of the ~100 pages a commit of ~50 events wrote);
-- keyed by leaf, the nodes a commit adds sit side by side on the last page or two. The nodes
-- are copied, not recomputed: every hash stays as it was written.

DROP TRIGGER tree_nodes_no_update;
DROP TRIGGER tree_nodes_no_delete;
ALTER TABLE tree_nodes RENAME TO tree_nodes_by_level;

CREATE TABLE tree_nodes (
    leaf  INTEGER NOT NULL,  -- the index of the leaf that completed the node
    level INTEGER NOT NULL,  -- 0 for the leaf itself
    hash  BLOB    NOT NULL,
    PRIMARY KEY (leaf, level)
) STRICT, WITHOUT ROWID;

INSERT INTO tree_nodes (leaf, level, hash)
    SELECT ((idx + 1) << level) - 1, level, hash FROM tree_nodes_by_level;
DROP TABLE tree_nodes_by_level;

CREATE TRIGGER tree_nodes_no_update BEFORE UPDATE ON tree_nodes
BEGIN
    SELECT RAISE(ABORT, 'tree nodes are append-only: update refused');
END;

CREATE TRIGGER tree_nodes_no_delete BEFORE DELETE ON tree_nodes
BEGIN
    SELECT RAISE(ABORT, 'tree nodes are append-only: delete refused');
END;
