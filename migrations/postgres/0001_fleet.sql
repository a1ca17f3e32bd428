-- The fleet store: every sidecar's trail, shipped by the sidecar and checked on arrival by
-- PostgreSQL itself (docs/fleet.md). The shippers' roles hold no privilege on these tables:
-- they may only call fleet_ingest, which runs as the owner of this schema and refuses, and
-- records in fleet_alarms, any batch that does not extend what the store holds for its node.
-- Every function names its tables by schema and sets its search_path with pg_temp last, so
-- that a caller's temporary tables can never stand in for the store's.

-- Nodes, registered by an operator: the node's id, the database role its shipper logs in as,
-- and its checkpoint verifier key (for `toolgate verify --postgres`).
CREATE TABLE fleet_nodes (
    node_id       TEXT PRIMARY KEY,
    db_role       TEXT NOT NULL UNIQUE,
    verifier_key  TEXT,
    registered_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The events: the columns of the SQLite trail (docs/trail-format.md), prefixed with the node.
CREATE TABLE fleet_events (
    node_id          TEXT    NOT NULL REFERENCES fleet_nodes (node_id),
    seq              BIGINT  NOT NULL,
    event_id         TEXT    NOT NULL,
    ts               TEXT    NOT NULL,
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
    rewritten_args_hash TEXT,
    outcome          TEXT,
    reason           TEXT,
    policy_ids       TEXT,
    policy_version   TEXT,
    shadow_outcome   TEXT,
    shadow_reason    TEXT,
    max_output_chars BIGINT,
    timeout_ms       BIGINT,
    duration_us      BIGINT,
    result_bytes     BIGINT,
    truncated        BIGINT,
    status           TEXT,
    error            TEXT,
    request          TEXT,
    note             TEXT,
    prev_hash        TEXT    NOT NULL,
    hash             TEXT    NOT NULL,
    received_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (node_id, seq)
);

CREATE INDEX fleet_events_session ON fleet_events (session_id, node_id, seq);
CREATE INDEX fleet_events_actor   ON fleet_events (actor_id, node_id, seq);
CREATE INDEX fleet_events_tool    ON fleet_events (tool, node_id, seq);
CREATE INDEX fleet_events_ts      ON fleet_events (ts);

-- Batches refused on arrival: the node, the first seq that did not fit, and what differed.
CREATE TABLE fleet_alarms (
    id          BIGSERIAL PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    node_id     TEXT NOT NULL,
    db_role     TEXT NOT NULL,
    seq         BIGINT,
    what        TEXT NOT NULL
);

-- Append-only, all three: rows are inserted, never changed or removed.
CREATE FUNCTION fleet_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the fleet store is append-only: % on % refused', TG_OP, TG_TABLE_NAME;
END $$;
CREATE TRIGGER fleet_events_append_only BEFORE UPDATE OR DELETE ON fleet_events
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_events_no_truncate BEFORE TRUNCATE ON fleet_events
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_alarms_append_only BEFORE UPDATE OR DELETE ON fleet_alarms
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_alarms_no_truncate BEFORE TRUNCATE ON fleet_alarms
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();

-- The hash of an event, exactly as docs/trail-format.md specifies it: SHA-256 of prev_hash
-- (32 bytes) and the encoding: 0x01, then each non-NULL column in byte order of the names, as
-- its name's length and name (written out below in hex, with the type byte), then for an
-- INTEGER 0x01 and a big-endian i64, for a TEXT 0x02, a big-endian u32 length and the UTF-8
-- text. A unit test (fleet::schema) checks the order and the prefixes against the trail's own
-- column table.
-- The batch being ingested, one per session (fleet_ingest fills and empties it).
CREATE UNLOGGED TABLE fleet_batch (LIKE fleet_events);
ALTER TABLE fleet_batch ALTER node_id DROP NOT NULL, ALTER received_at DROP NOT NULL,
    ADD COLUMN pid INTEGER NOT NULL DEFAULT pg_backend_pid();
CREATE INDEX fleet_batch_pid ON fleet_batch (pid, seq);

-- Each event of the batch with the hash of its content (`computed`).
CREATE FUNCTION fleet_batch_hashes()
RETURNS TABLE (seq BIGINT, prev_hash TEXT, hash TEXT, computed TEXT)
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT e.seq, e.prev_hash, e.hash, CASE WHEN e.prev_hash ~* '^[0-9a-f]{64}$' THEN
    encode(sha256(decode(e.prev_hash, 'hex') || '\x01'::bytea
        || CASE WHEN e.action IS NULL THEN ''::bytea ELSE '\x06616374696f6e02'::bytea
           || int4send(octet_length(e.action)) || convert_to(e.action, 'UTF8') END
        || CASE WHEN e.actor_id IS NULL THEN ''::bytea ELSE '\x086163746f725f696402'::bytea
           || int4send(octet_length(e.actor_id)) || convert_to(e.actor_id, 'UTF8') END
        || CASE WHEN e.actor_kind IS NULL THEN ''::bytea ELSE '\x0a6163746f725f6b696e6402'::bytea
           || int4send(octet_length(e.actor_kind)) || convert_to(e.actor_kind, 'UTF8') END
        || CASE WHEN e.args_hash IS NULL THEN ''::bytea ELSE '\x09617267735f6861736802'::bytea
           || int4send(octet_length(e.args_hash)) || convert_to(e.args_hash, 'UTF8') END
        || CASE WHEN e.decision_id IS NULL THEN ''::bytea ELSE '\x0b6465636973696f6e5f696402'::bytea
           || int4send(octet_length(e.decision_id)) || convert_to(e.decision_id, 'UTF8') END
        || CASE WHEN e.duration_us IS NULL THEN ''::bytea ELSE '\x0b6475726174696f6e5f757301'::bytea || int8send(e.duration_us) END
        || CASE WHEN e.error IS NULL THEN ''::bytea ELSE '\x056572726f7202'::bytea
           || int4send(octet_length(e.error)) || convert_to(e.error, 'UTF8') END
        || CASE WHEN e.event_id IS NULL THEN ''::bytea ELSE '\x086576656e745f696402'::bytea
           || int4send(octet_length(e.event_id)) || convert_to(e.event_id, 'UTF8') END
        || CASE WHEN e.kind IS NULL THEN ''::bytea ELSE '\x046b696e6402'::bytea
           || int4send(octet_length(e.kind)) || convert_to(e.kind, 'UTF8') END
        || CASE WHEN e.max_output_chars IS NULL THEN ''::bytea ELSE '\x106d61785f6f75747075745f636861727301'::bytea || int8send(e.max_output_chars) END
        || CASE WHEN e.note IS NULL THEN ''::bytea ELSE '\x046e6f746502'::bytea
           || int4send(octet_length(e.note)) || convert_to(e.note, 'UTF8') END
        || CASE WHEN e.outcome IS NULL THEN ''::bytea ELSE '\x076f7574636f6d6502'::bytea
           || int4send(octet_length(e.outcome)) || convert_to(e.outcome, 'UTF8') END
        || CASE WHEN e.policy_ids IS NULL THEN ''::bytea ELSE '\x0a706f6c6963795f69647302'::bytea
           || int4send(octet_length(e.policy_ids)) || convert_to(e.policy_ids, 'UTF8') END
        || CASE WHEN e.policy_version IS NULL THEN ''::bytea ELSE '\x0e706f6c6963795f76657273696f6e02'::bytea
           || int4send(octet_length(e.policy_version)) || convert_to(e.policy_version, 'UTF8') END
        || CASE WHEN e.reason IS NULL THEN ''::bytea ELSE '\x06726561736f6e02'::bytea
           || int4send(octet_length(e.reason)) || convert_to(e.reason, 'UTF8') END
        || CASE WHEN e.request IS NULL THEN ''::bytea ELSE '\x077265717565737402'::bytea
           || int4send(octet_length(e.request)) || convert_to(e.request, 'UTF8') END
        || CASE WHEN e.resource_id IS NULL THEN ''::bytea ELSE '\x0b7265736f757263655f696402'::bytea
           || int4send(octet_length(e.resource_id)) || convert_to(e.resource_id, 'UTF8') END
        || CASE WHEN e.resource_type IS NULL THEN ''::bytea ELSE '\x0d7265736f757263655f7479706502'::bytea
           || int4send(octet_length(e.resource_type)) || convert_to(e.resource_type, 'UTF8') END
        || CASE WHEN e.result_bytes IS NULL THEN ''::bytea ELSE '\x0c726573756c745f627974657301'::bytea || int8send(e.result_bytes) END
        || CASE WHEN e.rewritten_args_hash IS NULL THEN ''::bytea ELSE '\x1372657772697474656e5f617267735f6861736802'::bytea
           || int4send(octet_length(e.rewritten_args_hash)) || convert_to(e.rewritten_args_hash, 'UTF8') END
        || CASE WHEN e.seq IS NULL THEN ''::bytea ELSE '\x0373657101'::bytea || int8send(e.seq) END
        || CASE WHEN e.session_id IS NULL THEN ''::bytea ELSE '\x0a73657373696f6e5f696402'::bytea
           || int4send(octet_length(e.session_id)) || convert_to(e.session_id, 'UTF8') END
        || CASE WHEN e.shadow_outcome IS NULL THEN ''::bytea ELSE '\x0e736861646f775f6f7574636f6d6502'::bytea
           || int4send(octet_length(e.shadow_outcome)) || convert_to(e.shadow_outcome, 'UTF8') END
        || CASE WHEN e.shadow_reason IS NULL THEN ''::bytea ELSE '\x0d736861646f775f726561736f6e02'::bytea
           || int4send(octet_length(e.shadow_reason)) || convert_to(e.shadow_reason, 'UTF8') END
        || CASE WHEN e.status IS NULL THEN ''::bytea ELSE '\x0673746174757302'::bytea
           || int4send(octet_length(e.status)) || convert_to(e.status, 'UTF8') END
        || CASE WHEN e.task_type IS NULL THEN ''::bytea ELSE '\x097461736b5f7479706502'::bytea
           || int4send(octet_length(e.task_type)) || convert_to(e.task_type, 'UTF8') END
        || CASE WHEN e.timeout_ms IS NULL THEN ''::bytea ELSE '\x0a74696d656f75745f6d7301'::bytea || int8send(e.timeout_ms) END
        || CASE WHEN e.tool IS NULL THEN ''::bytea ELSE '\x04746f6f6c02'::bytea
           || int4send(octet_length(e.tool)) || convert_to(e.tool, 'UTF8') END
        || CASE WHEN e.truncated IS NULL THEN ''::bytea ELSE '\x097472756e636174656401'::bytea || int8send(e.truncated) END
        || CASE WHEN e.ts IS NULL THEN ''::bytea ELSE '\x02747302'::bytea
           || int4send(octet_length(e.ts)) || convert_to(e.ts, 'UTF8') END
    ), 'hex') END  -- NULL (a mismatch) when prev_hash is not 64 hex digits
    FROM public.fleet_batch e WHERE e.pid = pg_backend_pid()
$$;

-- The last seq and hash the store holds for a node (0 and NULL when none).
CREATE FUNCTION fleet_head(p_node TEXT, OUT seq BIGINT, OUT hash TEXT)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT coalesce(max(e.seq), 0),
           (SELECT h.hash FROM public.fleet_events h WHERE h.node_id = p_node
            ORDER BY h.seq DESC LIMIT 1)
    FROM public.fleet_events e WHERE e.node_id = p_node
$$;

-- Takes a batch of a node's events (a JSON array of objects named by column) and either
-- stores the new ones, or refuses the whole batch and records why. Checks, in order: the node
-- is registered and the caller logs in as its role; every event's hash is the hash of its
-- content; events the store already holds are shipped unchanged (delivery is at least once,
-- storage exactly once); the new events follow on from the stored head, seq by seq, each
-- prev_hash the hash before it. Returns the number stored, the node's head after the batch,
-- and the refusal (NULL when accepted).
CREATE FUNCTION fleet_ingest(p_node TEXT, p_events JSON,
    OUT stored BIGINT, OUT head BIGINT, OUT refused TEXT)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_role TEXT;
    v_start BIGINT;
    v_head BIGINT;
    v_hash TEXT;
    r RECORD;
BEGIN
    stored := 0;
    SELECT n.db_role INTO v_role FROM public.fleet_nodes n WHERE n.node_id = p_node FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO public.fleet_alarms (node_id, db_role, seq, what)
            VALUES (p_node, session_user, NULL, 'a batch from an unregistered node');
        RAISE WARNING 'fleet alarm: node %, role %: a batch from an unregistered node',
            p_node, session_user;
        refused := 'the node is not registered';
        RETURN;
    END IF;
    IF v_role <> session_user THEN
        INSERT INTO public.fleet_alarms (node_id, db_role, seq, what)
            VALUES (p_node, session_user, NULL,
                    format('a batch under this node''s id from the role %I, not %I',
                           session_user, v_role));
        RAISE WARNING 'fleet alarm: node %, role %: a batch under another node''s id',
            p_node, session_user;
        refused := 'this role does not ship for this node';
        RETURN;
    END IF;
    SELECT h.seq, h.hash INTO v_head, v_hash FROM public.fleet_head(p_node) h;
    IF v_head = 0 THEN
        v_hash := repeat('0', 64);
    END IF;
    v_start := v_head;
    DELETE FROM public.fleet_batch WHERE pid = pg_backend_pid();
    INSERT INTO public.fleet_batch (
        seq, event_id, ts, kind, decision_id, session_id, task_type, actor_id, actor_kind, tool,
        action, resource_type, resource_id, args_hash, rewritten_args_hash, outcome, reason,
        policy_ids, policy_version, shadow_outcome, shadow_reason, max_output_chars, timeout_ms,
        duration_us, result_bytes, truncated, status, error, request, note, prev_hash, hash)
    SELECT
        j.seq, j.event_id, j.ts, j.kind, j.decision_id, j.session_id, j.task_type, j.actor_id,
        j.actor_kind, j.tool, j.action, j.resource_type, j.resource_id, j.args_hash,
        j.rewritten_args_hash, j.outcome, j.reason, j.policy_ids, j.policy_version,
        j.shadow_outcome, j.shadow_reason, j.max_output_chars, j.timeout_ms, j.duration_us,
        j.result_bytes, j.truncated, j.status, j.error, j.request, j.note, j.prev_hash, j.hash
    FROM json_populate_recordset(NULL::public.fleet_events, p_events) j;
    FOR r IN SELECT b.seq, b.prev_hash, b.hash, b.computed, s.hash AS held
             FROM public.fleet_batch_hashes() b
             LEFT JOIN public.fleet_events s ON s.node_id = p_node AND s.seq = b.seq
             ORDER BY b.seq
    LOOP
        IF r.computed IS DISTINCT FROM r.hash THEN
            refused := format('seq %s: hash mismatch (the event''s content does not hash to its hash)', r.seq);
        ELSIF r.seq <= v_start THEN
            IF r.held IS DISTINCT FROM r.hash THEN
                refused := format('seq %s: rewritten (the store holds hash %s, the node shipped %s)',
                                  r.seq, r.held, r.hash);
            END IF;
        ELSIF r.seq <> v_head + 1 THEN
            refused := format('seq %s: not next (the store holds up to seq %s)', r.seq, v_head);
        ELSIF r.prev_hash <> v_hash THEN
            refused := format('seq %s: broken link (prev_hash is not the stored hash of seq %s)',
                              r.seq, v_head);
        END IF;
        IF refused IS NOT NULL THEN
            -- Nothing of the batch is kept; the handler below records the alarm.
            RAISE EXCEPTION USING ERRCODE = 'TGREF', MESSAGE = refused;
        END IF;
        IF r.seq > v_start THEN
            v_head := r.seq;
            v_hash := r.hash;
        END IF;
    END LOOP;
    INSERT INTO public.fleet_events (node_id,
        seq, event_id, ts, kind, decision_id, session_id, task_type, actor_id, actor_kind, tool,
        action, resource_type, resource_id, args_hash, rewritten_args_hash, outcome, reason,
        policy_ids, policy_version, shadow_outcome, shadow_reason, max_output_chars, timeout_ms,
        duration_us, result_bytes, truncated, status, error, request, note, prev_hash, hash)
    SELECT p_node,
        b.seq, b.event_id, b.ts, b.kind, b.decision_id, b.session_id, b.task_type, b.actor_id,
        b.actor_kind, b.tool, b.action, b.resource_type, b.resource_id, b.args_hash,
        b.rewritten_args_hash, b.outcome, b.reason, b.policy_ids, b.policy_version,
        b.shadow_outcome, b.shadow_reason, b.max_output_chars, b.timeout_ms, b.duration_us,
        b.result_bytes, b.truncated, b.status, b.error, b.request, b.note, b.prev_hash, b.hash
    FROM public.fleet_batch b
    WHERE b.pid = pg_backend_pid() AND b.seq > v_start
    ORDER BY b.seq;
    GET DIAGNOSTICS stored = ROW_COUNT;
    DELETE FROM public.fleet_batch WHERE pid = pg_backend_pid();
    head := v_head;
EXCEPTION WHEN SQLSTATE 'TGREF' THEN
    -- The block's work is rolled back (the batch with it); the alarm is recorded after it.
    INSERT INTO public.fleet_alarms (node_id, db_role, seq, what)
        VALUES (p_node, session_user, (regexp_match(SQLERRM, '^seq (\d+)'))[1]::BIGINT, SQLERRM);
    -- The server's log has it too, even if the caller rolls its transaction back.
    RAISE WARNING 'fleet alarm: node %, role %: %', p_node, session_user, SQLERRM;
    stored := 0;
    SELECT h.seq INTO head FROM public.fleet_head(p_node) h;
    refused := SQLERRM;
END $$;

REVOKE ALL ON FUNCTION fleet_ingest(TEXT, JSON) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet_head(TEXT) FROM PUBLIC;
