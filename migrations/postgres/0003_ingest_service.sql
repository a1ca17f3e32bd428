-- The store does storage (docs/fleet.md): batches are checked by the ingest service
-- (`toolgate serve --ingest`), natively, before it writes them with COPY; PostgreSQL keeps
-- the rows append-only and serves the auditors. This migration:
--   - drops the functions that checked batches in SQL (the hashing, the tree, and Ed25519
--     written in PL/pgSQL), and the shippers' entry points with them;
--   - lets a node be registered with a token (its hash) instead of a database role, and be
--     revoked;
--   - partitions the events by the month (UTC) they arrived in, ready for retention. No row
--     is rewritten or copied: the events table as it stands becomes the first partition.

DROP FUNCTION fleet_ingest(TEXT, fleet_event[]);
DROP FUNCTION fleet_cosign(TEXT, BIGINT[], TEXT[], BIGINT[], BIGINT[], TEXT[]);
DROP FUNCTION fleet_cosigned(TEXT);
DROP FUNCTION fleet_caller(TEXT);
DROP FUNCTION fleet_head(TEXT);
DROP FUNCTION fleet_note_signed(TEXT, TEXT);
DROP FUNCTION fleet_batch_hashes(fleet_event[]);
DROP FUNCTION fleet_root(BYTEA[]);
DROP TYPE fleet_event;
DROP FUNCTION ed25519_verify(BYTEA, BYTEA, BYTEA);
DROP FUNCTION ed25519_decode(BYTEA);
DROP FUNCTION ed25519_encode(NUMERIC[]);
DROP FUNCTION ed25519_double(NUMERIC[]);
DROP FUNCTION ed25519_add(NUMERIC[], NUMERIC[]);
DROP FUNCTION ed25519_pow(NUMERIC, NUMERIC);
DROP FUNCTION ed25519_bytes(NUMERIC);
DROP FUNCTION ed25519_int(BYTEA);

-- A node ships with a token `toolgate fleet register` issued; the store keeps its SHA-256.
-- `db_role` stays for the nodes registered before, which shipped as database roles.
ALTER TABLE fleet_nodes ALTER COLUMN db_role DROP NOT NULL;
ALTER TABLE fleet_nodes ADD COLUMN token_hash TEXT UNIQUE;
ALTER TABLE fleet_nodes ADD COLUMN revoked_at TIMESTAMPTZ;

-- An alarm names the node the refused batch claimed to be of (`node_id`), the node whose
-- token shipped it (`shipper`; NULL when no token was valid) and the peer's address.
ALTER TABLE fleet_alarms ALTER COLUMN db_role DROP NOT NULL;
ALTER TABLE fleet_alarms ADD COLUMN shipper TEXT;
ALTER TABLE fleet_alarms ADD COLUMN peer TEXT;

-- Every node has its tree's row from its registration on: the ingest service locks it for the
-- node's batch (two ingest servers never interleave one node) and reads the head from it.
INSERT INTO fleet_trees (node_id, size, hash, edge)
    SELECT n.node_id, 0, repeat('0', 64), '{}' FROM fleet_nodes n
    ON CONFLICT (node_id) DO NOTHING;

-- A tree only grows: whoever updates it (the ingest service's role may) cannot set a node
-- back to an earlier head, nor give the same size another head, to have a second history
-- stored after the first. Nor is a tree removed.
CREATE FUNCTION fleet_trees_grow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'UPDATE' OR NEW.node_id <> OLD.node_id OR NEW.size < OLD.size
       OR (NEW.size = OLD.size AND (NEW.hash, NEW.edge) IS DISTINCT FROM (OLD.hash, OLD.edge)) THEN
        RAISE EXCEPTION 'a fleet tree only grows: % of node % refused', TG_OP, OLD.node_id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER fleet_trees_grow BEFORE UPDATE OR DELETE ON fleet_trees
    FOR EACH ROW EXECUTE FUNCTION fleet_trees_grow();
CREATE TRIGGER fleet_trees_no_truncate BEFORE TRUNCATE ON fleet_trees
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();

-- The events, partitioned by the month they arrived in. A key of a partitioned table holds
-- its partition key: (node_id, seq) is kept unique by the ingest service, which stores a
-- node's events only under the lock of its tree's row, each after the stored head.
ALTER TABLE fleet_cosignatures DROP CONSTRAINT fleet_cosignatures_node_id_seq_fkey;
DROP TRIGGER fleet_events_append_only ON fleet_events;
ALTER TABLE fleet_events DROP CONSTRAINT fleet_events_pkey;
ALTER TABLE fleet_events RENAME TO fleet_events_before;
ALTER INDEX fleet_events_session RENAME TO fleet_events_before_session;
ALTER INDEX fleet_events_actor RENAME TO fleet_events_before_actor;
ALTER INDEX fleet_events_tool RENAME TO fleet_events_before_tool;
ALTER INDEX fleet_events_ts RENAME TO fleet_events_before_ts;
ALTER INDEX fleet_events_rare_kinds RENAME TO fleet_events_before_rare_kinds;
CREATE TABLE fleet_events (LIKE fleet_events_before INCLUDING DEFAULTS)
    PARTITION BY RANGE (received_at);
ALTER TABLE fleet_events ADD CONSTRAINT fleet_events_pkey
    PRIMARY KEY (node_id, seq, received_at);
-- The auditors' first pages: by session, actor or tool, by time, and the rare kinds
-- (violations, refusals, approvals, checkpoints); each in (node_id, seq) order.
CREATE INDEX fleet_events_session ON fleet_events (session_id, node_id, seq);
CREATE INDEX fleet_events_actor   ON fleet_events (actor_id, node_id, seq);
CREATE INDEX fleet_events_tool    ON fleet_events (tool, node_id, seq);
CREATE INDEX fleet_events_ts      ON fleet_events (ts);
CREATE INDEX fleet_events_rare_kinds ON fleet_events (kind, node_id, seq)
    WHERE kind NOT IN ('decision', 'execution');
-- One call's story: its decision, approvals, execution (the console's, `query --decision`).
CREATE INDEX fleet_events_decision ON fleet_events (decision_id, node_id, seq)
    WHERE decision_id IS NOT NULL;
-- Append-only, on every partition (row triggers are cloned to each; a TRUNCATE trigger is
-- not, so fleet_partition gives each its own).
CREATE TRIGGER fleet_events_append_only BEFORE UPDATE OR DELETE ON fleet_events
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_events_no_truncate BEFORE TRUNCATE ON fleet_events
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();

-- The events stored so far, and those arriving until the next month: the first partition,
-- attached as it is (its own indexes serve; only the new key is built).
DO $$
BEGIN
    EXECUTE format('ALTER TABLE fleet_events ATTACH PARTITION fleet_events_before '
                   'FOR VALUES FROM (MINVALUE) TO (%L)',
                   date_trunc('month', now(), 'UTC') + interval '1 month');
END $$;

-- The partition of the month (UTC) `p_at` falls in, created unless one covers it already,
-- with its own TRUNCATE trigger; only for a month from last month to the next but one, so
-- that a caller cannot have partitions made without end. The ingest service calls it ahead of
-- the month; it runs as the store's owner, who alone creates (and, for retention, detaches)
-- partitions. The table is made on its own and then attached, which takes a lock that lets
-- the ingest service write on and the auditors read on.
CREATE FUNCTION fleet_partition(p_at TIMESTAMPTZ) RETURNS VOID
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp SET TimeZone = 'UTC' SET lock_timeout = '5s' AS $$
DECLARE
    v_from TIMESTAMPTZ := date_trunc('month', p_at);
    v_name TEXT := 'fleet_events_' || to_char(v_from, 'YYYY_MM');
BEGIN
    IF p_at < date_trunc('month', now()) - interval '1 month'
       OR p_at >= date_trunc('month', now()) + interval '3 months' THEN
        RAISE EXCEPTION 'fleet_partition: % is not within a month of now', p_at;
    END IF;
    -- One creator at a time: two ingest servers may ask at once.
    PERFORM pg_advisory_xact_lock(hashtext('fleet_partition'));
    IF to_regclass('public.' || v_name) IS NOT NULL THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE TABLE public.%I (LIKE public.fleet_events INCLUDING DEFAULTS)', v_name);
    EXECUTE format('ALTER TABLE public.fleet_events ATTACH PARTITION public.%I '
                   'FOR VALUES FROM (%L) TO (%L)', v_name, v_from, v_from + interval '1 month');
    EXECUTE format('CREATE TRIGGER fleet_events_no_truncate BEFORE TRUNCATE ON public.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION public.fleet_append_only()', v_name);
EXCEPTION WHEN invalid_object_definition THEN
    -- Another partition (the first one) covers the month already: the new table goes with
    -- the block's rollback.
    NULL;
END $$;
REVOKE ALL ON FUNCTION fleet_partition(TIMESTAMPTZ) FROM PUBLIC;

SELECT fleet_partition(now() + interval '1 month');
