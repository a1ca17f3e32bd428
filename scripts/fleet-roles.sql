-- The fleet store's role model (docs/fleet.md). Run it with psql as the role that owns the
-- store (the one that ran `toolgate fleet migrate`), once, after the migration:
--
--     psql "$OWNER_URL" -f scripts/fleet-roles.sql
--
-- It creates two group roles and gives them the only privileges they need:
--   toolgate_shipper  may call fleet_head, fleet_ingest, fleet_cosigned and fleet_cosign, and
--                     nothing else: it cannot read, insert, change or delete a row of any
--                     table. The functions run as the owner and check everything shipped
--                     (docs/fleet.md, "Checked on arrival").
--   toolgate_auditor  may read the tables, and nothing else.
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

REVOKE ALL ON fleet_nodes, fleet_events, fleet_trees, fleet_cosignatures, fleet_alarms FROM PUBLIC;
-- Nobody but the owner creates objects here, temporary ones included: the functions name
-- their tables by schema, and this takes the means to shadow them away as well.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
DO $$
BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END $$;
REVOKE ALL ON FUNCTION fleet_head(TEXT), fleet_ingest(TEXT, fleet_event[]), fleet_cosigned(TEXT),
    fleet_cosign(TEXT, BIGINT[], TEXT[], BIGINT[], BIGINT[], TEXT[]), fleet_caller(TEXT) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet_head(TEXT), fleet_ingest(TEXT, fleet_event[]), fleet_cosigned(TEXT),
    fleet_cosign(TEXT, BIGINT[], TEXT[], BIGINT[], BIGINT[], TEXT[]) TO toolgate_shipper;
GRANT SELECT ON fleet_nodes, fleet_events, fleet_trees, fleet_cosignatures, fleet_alarms
    TO toolgate_auditor;
GRANT EXECUTE ON FUNCTION fleet_head(TEXT), fleet_cosigned(TEXT) TO toolgate_auditor;
