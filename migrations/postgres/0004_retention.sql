-- Retention of the fleet store (docs/fleet.md, "Retention"): `toolgate fleet prune`, run as
-- the store's owner, drops whole partitions of `fleet_events` once every node's events in
-- them are archived in the node's own archive, verified there, and covered by a signed (and,
-- when asked, cosigned) checkpoint the store keeps. Each drop is recorded, node by node, so
-- that `verify --postgres` starts each node's chain and tree where the store's copy now
-- starts. A legal hold stops every drop.

-- Where a node archives its trail (its `[archive] url`, and the store's options as
-- `object_store` names them, a JSON object of strings; never a secret).
ALTER TABLE fleet_nodes ADD COLUMN archive_url TEXT;
ALTER TABLE fleet_nodes ADD COLUMN archive_options TEXT;

-- Legal holds, set and released: the last row says whether one is in force.
CREATE TABLE fleet_holds (
    id     BIGSERIAL PRIMARY KEY,
    at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    held   BOOLEAN NOT NULL,
    reason TEXT NOT NULL,
    set_by TEXT NOT NULL DEFAULT current_user
);
CREATE TRIGGER fleet_holds_append_only BEFORE UPDATE OR DELETE ON fleet_holds
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_holds_no_truncate BEFORE TRUNCATE ON fleet_holds
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();

-- What each drop took of each node: seq `first_seq` through `through_seq` (the first event
-- the store still holds is the one after), the last one's hash, the node's tree over
-- 1 … through_seq as its right edge (as `fleet_trees` keeps it), the checkpoint event that
-- covered them and the archive they were verified in.
CREATE TABLE fleet_prunes (
    id             BIGSERIAL PRIMARY KEY,
    at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    partition_name TEXT NOT NULL,
    received_to    TIMESTAMPTZ NOT NULL,
    node_id        TEXT NOT NULL REFERENCES fleet_nodes (node_id),
    first_seq      BIGINT NOT NULL,
    through_seq    BIGINT NOT NULL,
    through_hash   TEXT NOT NULL,
    edge           BYTEA[] NOT NULL,
    checkpoint_seq BIGINT NOT NULL,
    archive        TEXT NOT NULL,
    UNIQUE (node_id, through_seq),
    CHECK (first_seq >= 1 AND through_seq >= first_seq AND checkpoint_seq > through_seq)
);
CREATE TRIGGER fleet_prunes_append_only BEFORE UPDATE OR DELETE ON fleet_prunes
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_prunes_no_truncate BEFORE TRUNCATE ON fleet_prunes
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();

-- An event's arrival time is taken when it is written, under the node's lock (the time its
-- COPY statement started, not its transaction): a node's later events never arrive earlier,
-- even through two ingest servers, so that each partition holds whole runs of a node's seqs
-- and retention can cut it. (Stable within the statement: COPY still inserts in batches.)
ALTER TABLE fleet_events ALTER COLUMN received_at SET DEFAULT statement_timestamp();
