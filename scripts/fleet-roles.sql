-- The fleet store's role model (docs/fleet.md). Run it with psql as the role that owns the
-- store (the one that ran `toolgate fleet migrate`), after each migration:
--
--     psql "$OWNER_URL" -f scripts/fleet-roles.sql
--
-- It creates two group roles and gives them the only privileges they need:
--   toolgate_ingest   what the ingest service (`toolgate serve --ingest`) does: read the
--                     nodes' registry, trees, events and cosignatures; insert events,
--                     cosignatures and alarms; move a node's tree on; have the month's
--                     partition made (fleet_partition runs as the owner); read where retention
--                     cut each node. It cannot register,
--                     revoke or re-key a node, and nobody changes or deletes a stored row (the
--                     triggers refuse it).
--   toolgate_auditor  may read the tables, and nothing else.
-- Then a login role in each, for the ingest servers and for the auditors:
--
--     CREATE ROLE ingest LOGIN PASSWORD '…' IN ROLE toolgate_ingest;
--     CREATE ROLE alice LOGIN PASSWORD '…' IN ROLE toolgate_auditor;
--
-- Nodes hold no database role: they ship with the token `toolgate fleet register` issues.

-- Roles belong to the cluster: another database's run may have made them already (or be
-- making them right now).
DO $$
BEGIN
    CREATE ROLE toolgate_ingest NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
    CREATE ROLE toolgate_auditor NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

REVOKE ALL ON fleet_nodes, fleet_events, fleet_trees, fleet_cosignatures, fleet_alarms,
    fleet_holds, fleet_prunes FROM PUBLIC;
-- Nobody but the owner creates objects here, temporary ones included.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
DO $$
BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END $$;
GRANT SELECT ON fleet_nodes, fleet_events, fleet_trees, fleet_cosignatures, fleet_prunes
    TO toolgate_ingest;
GRANT INSERT ON fleet_events, fleet_cosignatures, fleet_alarms TO toolgate_ingest;
GRANT UPDATE (size, hash, edge) ON fleet_trees TO toolgate_ingest;
GRANT USAGE ON SEQUENCE fleet_alarms_id_seq TO toolgate_ingest;
GRANT EXECUTE ON FUNCTION fleet_partition(TIMESTAMPTZ) TO toolgate_ingest;
GRANT SELECT ON fleet_nodes, fleet_events, fleet_trees, fleet_cosignatures, fleet_alarms,
    fleet_holds, fleet_prunes TO toolgate_auditor;
