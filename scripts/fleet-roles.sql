-- The fleet store's role model (docs/fleet.md). Run it with psql as the role that owns the
-- store (the one that ran `toolgate fleet migrate`), once, after the migration:
--
--     psql "$OWNER_URL" -f scripts/fleet-roles.sql
--
-- It creates two group roles and gives them the only privileges they need:
--   toolgate_shipper  may call fleet_ingest and fleet_head, and nothing else: it cannot read,
--                     insert, change or delete a row of any table. fleet_ingest runs as the
--                     owner and checks every batch (docs/fleet.md, "Checked on arrival").
--   toolgate_auditor  may read the events, the nodes and the alarms, and nothing else.
-- Then, per node, a login role in toolgate_shipper, registered with that node's id:
--
--     CREATE ROLE node_a LOGIN PASSWORD '…' IN ROLE toolgate_shipper;
--     toolgate fleet register --postgres "$OWNER_URL" --node a --role node_a --key "$KEY_A"
--
-- and, per auditor, a login role in toolgate_auditor.

-- Roles belong to the cluster: another database's run may have made them already (or be
-- making them right now).
DO $$
BEGIN
    CREATE ROLE toolgate_shipper NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
    CREATE ROLE toolgate_auditor NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

REVOKE ALL ON fleet_nodes, fleet_events, fleet_alarms, fleet_batch FROM PUBLIC;
-- Nobody but the owner creates objects here, temporary ones included: the functions name
-- their tables by schema, and this takes the means to shadow them away as well.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
DO $$
BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END $$;
REVOKE ALL ON FUNCTION fleet_ingest(TEXT, JSON), fleet_head(TEXT) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet_ingest(TEXT, JSON), fleet_head(TEXT) TO toolgate_shipper;
GRANT SELECT ON fleet_nodes, fleet_events, fleet_alarms TO toolgate_auditor;
GRANT EXECUTE ON FUNCTION fleet_head(TEXT) TO toolgate_auditor;
