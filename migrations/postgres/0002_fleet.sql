-- The fleet store: every sidecar's trail, shipped by the sidecar and checked on arrival by
-- PostgreSQL itself (docs/fleet.md). The shippers' roles hold no privilege on these tables:
-- they may only call fleet_head, fleet_ingest, fleet_cosigned and fleet_cosign, which run as
-- the owner of this schema and refuse, and record in fleet_alarms, anything that does not
-- extend what the store holds for the node. Every function names its tables by schema and
-- sets its search_path with pg_temp last, so that a caller's temporary tables can never stand
-- in for the store's.

-- Nodes, registered by an operator: the node's id, the database role its shipper logs in as,
-- and its checkpoint verifier key (checked on arrival, and by `toolgate verify --postgres`).
CREATE TABLE fleet_nodes (
    node_id       TEXT PRIMARY KEY,
    db_role       TEXT NOT NULL UNIQUE,
    verifier_key  TEXT,
    registered_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One event as a shipper sends it: the columns of the SQLite trail (docs/trail-format.md), in
-- its order. A batch is an array of them, sent in PostgreSQL's binary format.
CREATE TYPE fleet_event AS (
    seq              BIGINT ,
    event_id         TEXT   ,
    ts               TEXT   ,
    kind             TEXT   ,
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
    prev_hash        TEXT   ,
    hash             TEXT
);

-- The events: the trail's columns, prefixed with the node. No foreign key to fleet_nodes: only
-- fleet_ingest inserts, for a registered node, and the key's check cost a tenth of an ingest.
CREATE TABLE fleet_events (
    node_id          TEXT    NOT NULL,
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
-- The rare kinds (violations, refusals, approvals, checkpoints) that auditors look for: a
-- partial index, so that the common ones cost an ingest nothing more, and a page of them does
-- not scan the table.
CREATE INDEX fleet_events_rare_kinds ON fleet_events (kind, node_id, seq)
    WHERE kind NOT IN ('decision', 'execution');

-- Each node's head and Merkle tree (RFC 6962) over the events stored: `size` events (the last
-- seq), the last one's `hash`, and the tree's right edge: the roots of its perfect subtrees,
-- largest first, one per set bit of `size`. fleet_ingest keeps it with every batch, and checks
-- every checkpoint event that arrives against it; it always covers every stored event.
CREATE TABLE fleet_trees (
    node_id TEXT PRIMARY KEY REFERENCES fleet_nodes (node_id),
    size    BIGINT  NOT NULL,
    hash    TEXT    NOT NULL,
    edge    BYTEA[] NOT NULL
);

-- Witnesses' cosignatures (C2SP tlog-cosignature) of the nodes' checkpoint events, shipped
-- after the events: `seq` is the checkpoint event's, `witness` the witness's verifier key.
CREATE TABLE fleet_cosignatures (
    node_id     TEXT   NOT NULL,
    seq         BIGINT NOT NULL,
    witness     TEXT   NOT NULL,
    size        BIGINT NOT NULL,
    time        BIGINT NOT NULL,
    line        TEXT   NOT NULL,
    received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (node_id, seq, witness),
    FOREIGN KEY (node_id, seq) REFERENCES fleet_events (node_id, seq)
);

-- What was refused on arrival: the node, the first seq that did not fit, and what differed.
CREATE TABLE fleet_alarms (
    id          BIGSERIAL PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    node_id     TEXT NOT NULL,
    db_role     TEXT NOT NULL,
    seq         BIGINT,
    what        TEXT NOT NULL
);

-- Append-only: events, cosignatures and alarms are inserted, never changed or removed.
CREATE FUNCTION fleet_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the fleet store is append-only: % on % refused', TG_OP, TG_TABLE_NAME;
END $$;
CREATE TRIGGER fleet_events_append_only BEFORE UPDATE OR DELETE ON fleet_events
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_events_no_truncate BEFORE TRUNCATE ON fleet_events
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_cosignatures_append_only BEFORE UPDATE OR DELETE ON fleet_cosignatures
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_cosignatures_no_truncate BEFORE TRUNCATE ON fleet_cosignatures
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_alarms_append_only BEFORE UPDATE OR DELETE ON fleet_alarms
    FOR EACH ROW EXECUTE FUNCTION fleet_append_only();
CREATE TRIGGER fleet_alarms_no_truncate BEFORE TRUNCATE ON fleet_alarms
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_append_only();

-- Each event of a batch with the hash of its content (`computed`), computed exactly as
-- docs/trail-format.md specifies it: SHA-256 of prev_hash (32 bytes) and the encoding: 0x01,
-- then each non-NULL column in byte order of the names, as its name's length and name (written
-- out below in hex, with the type byte), then for an INTEGER 0x01 and a big-endian i64, for a
-- TEXT 0x02, a big-endian u32 length and the UTF-8 text. A unit test (fleet::schema) checks
-- the order and the prefixes against the trail's own column table. `computed` is NULL (a
-- mismatch) when prev_hash is not 64 lowercase hex digits (what the trail writes; a
-- translate, not a regular expression, which cost a sixth of an ingest). One call per batch, the expression inline
-- over its rows: as a function of one event, called per row, it costs five times as much.
CREATE FUNCTION fleet_batch_hashes(p_events fleet_event[])
RETURNS TABLE (seq BIGINT, prev_hash TEXT, hash TEXT, computed TEXT)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT e.seq, e.prev_hash, e.hash, CASE WHEN octet_length(e.prev_hash) = 64
        AND translate(e.prev_hash, '0123456789abcdef', '') = '' THEN
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
    ), 'hex') END
    FROM unnest(p_events) e
$$;

-- The root of a tree from its right edge (largest subtree first); SHA-256 of nothing when
-- empty.
CREATE FUNCTION fleet_root(p_edge BYTEA[]) RETURNS BYTEA
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_root BYTEA;
BEGIN
    IF cardinality(p_edge) = 0 THEN
        RETURN sha256(''::bytea);
    END IF;
    v_root := p_edge[cardinality(p_edge)];
    FOR i IN REVERSE cardinality(p_edge) - 1 .. 1 LOOP
        v_root := sha256('\x01'::bytea || p_edge[i] || v_root);
    END LOOP;
    RETURN v_root;
END $$;

-- The last seq and hash the store holds for a node (0 and NULL when none).
CREATE FUNCTION fleet_head(p_node TEXT, OUT seq BIGINT, OUT hash TEXT)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT coalesce(max(t.size), 0), max(t.hash) FROM public.fleet_trees t
    WHERE t.node_id = p_node
$$;

-- Whether the caller may ship for `p_node`: NULL when it may, else the refusal (recorded in
-- fleet_alarms). Locks the node's row, so that two batches of one node never interleave.
CREATE FUNCTION fleet_caller(p_node TEXT) RETURNS TEXT
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_role TEXT;
    v_what TEXT;
    v_refused TEXT;
BEGIN
    SELECT n.db_role INTO v_role FROM public.fleet_nodes n WHERE n.node_id = p_node FOR UPDATE;
    IF NOT FOUND THEN
        v_what := 'a batch from an unregistered node';
        v_refused := 'the node is not registered';
    ELSIF v_role <> session_user THEN
        v_what := format('a batch under this node''s id from the role %I, not %I',
                         session_user, v_role);
        v_refused := 'this role does not ship for this node';
    ELSE
        RETURN NULL;
    END IF;
    INSERT INTO public.fleet_alarms (node_id, db_role, seq, what)
        VALUES (p_node, session_user, NULL, v_what);
    RAISE WARNING 'fleet alarm: node %, role %: %', p_node, session_user, v_what;
    RETURN v_refused;
END $$;

-- Whether a signed note (C2SP signed-note) carries a valid signature by the verifier key
-- `p_key` (`<name>+<key id>+<base64(0x01 || Ed25519 public key)>`): a line
-- `— <name> <base64(key id || signature)>` whose signature of the note's text, up to and
-- including its first empty line's newline, ed25519_verify takes. False for anything malformed.
CREATE FUNCTION fleet_note_signed(p_note TEXT, p_key TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_name TEXT := split_part(p_key, '+', 1);
    v_split INT := position(E'\n\n' IN p_note);
    v_id BYTEA;
    v_public BYTEA;
    v_body BYTEA;
    v_line TEXT;
    v_signature BYTEA;
BEGIN
    IF p_note IS NULL OR p_key IS NULL OR v_split = 0 THEN
        RETURN FALSE;
    END IF;
    v_id := decode(split_part(p_key, '+', 2), 'hex');
    -- The key's base64 may hold '+' itself: it is all that follows the second '+'.
    v_public := decode(substring(p_key FROM length(v_name) + length(split_part(p_key, '+', 2)) + 3),
                       'base64');
    IF length(v_id) <> 4 OR length(v_public) <> 33 OR get_byte(v_public, 0) <> 1 THEN
        RETURN FALSE;
    END IF;
    v_body := convert_to(left(p_note, v_split), 'UTF8');
    FOREACH v_line IN ARRAY string_to_array(substring(p_note FROM v_split + 2), E'\n') LOOP
        IF starts_with(v_line, '— ' || v_name || ' ') THEN
            v_signature := decode(substring(v_line FROM length(v_name) + 4), 'base64');
            IF length(v_signature) = 68 AND substring(v_signature FOR 4) = v_id
               AND public.ed25519_verify(substring(v_public FROM 2), v_body,
                                         substring(v_signature FROM 5)) THEN
                RETURN TRUE;
            END IF;
        END IF;
    END LOOP;
    RETURN FALSE;
EXCEPTION WHEN invalid_parameter_value THEN
    -- decode's refusal of bad hex or base64.
    RETURN FALSE;
END $$;

-- Takes a batch of a node's events and either stores the new ones, or refuses the whole batch
-- and records why. Checks, in seq order, the first failure naming the batch's refusal: the
-- node is registered and the caller logs in as its role; every event's hash is the hash of
-- its content; events the store already holds are shipped unchanged (delivery is at least
-- once, storage exactly once); the new events follow on from the stored head, seq by seq,
-- each prev_hash the hash before it; each checkpoint event's size and root are those of the
-- node's tree of the events before it, and it is signed by the node's registered key. Returns the number stored, the node's head after the
-- batch, and the refusal (NULL when accepted).
CREATE FUNCTION fleet_ingest(p_node TEXT, p_events fleet_event[],
    OUT stored BIGINT, OUT head BIGINT, OUT refused TEXT)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_start BIGINT;
    v_hash TEXT;
    v_size BIGINT;
    v_edge BYTEA[];
    r RECORD;
    v_leaf BYTEA;
    v_bits BIGINT;
    v_cp_size TEXT;
    v_cp_root TEXT;
    v_key TEXT;
BEGIN
    stored := 0;
    refused := public.fleet_caller(p_node);
    IF refused IS NOT NULL THEN
        SELECT h.seq INTO head FROM public.fleet_head(p_node) h;
        RETURN;
    END IF;
    SELECT h.seq, coalesce(h.hash, repeat('0', 64)) INTO v_start, v_hash
        FROM public.fleet_head(p_node) h;
    -- Only the events the store holds already are looked up: the new ones are the most.
    -- The first event that does not fit, set-based: `k` numbers the new events from 1.
    SELECT CASE
        WHEN c.computed IS DISTINCT FROM c.hash THEN
            format('seq %s: hash mismatch (the event''s content does not hash to its hash)', c.seq)
        WHEN c.seq <= v_start THEN
            CASE WHEN c.held IS DISTINCT FROM c.hash THEN
                format('seq %s: rewritten (the store holds hash %s, the node shipped %s)',
                       c.seq, c.held, c.hash) END
        WHEN c.seq <> v_start + c.k THEN
            format('seq %s: not next (the store holds up to seq %s)', c.seq, v_start + c.k - 1)
        WHEN c.prev_hash <> coalesce(c.before, v_hash) THEN
            format('seq %s: broken link (prev_hash is not the stored hash of seq %s)',
                   c.seq, v_start + c.k - 1)
        END INTO refused
    FROM (SELECT b.seq, b.prev_hash, b.hash, b.computed,
                 CASE WHEN b.seq <= v_start THEN
                     (SELECT s.hash FROM public.fleet_events s
                      WHERE s.node_id = p_node AND s.seq = b.seq) END AS held,
                 row_number() OVER (PARTITION BY b.seq > v_start ORDER BY b.seq) AS k,
                 lag(b.hash) OVER (PARTITION BY b.seq > v_start ORDER BY b.seq) AS before
          FROM public.fleet_batch_hashes(p_events) b) c
    WHERE c.computed IS DISTINCT FROM c.hash
       OR (c.seq <= v_start AND c.held IS DISTINCT FROM c.hash)
       OR (c.seq > v_start AND (c.seq <> v_start + c.k
                                OR c.prev_hash <> coalesce(c.before, v_hash)))
    ORDER BY c.seq LIMIT 1;
    IF refused IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'TGREF', MESSAGE = refused;
    END IF;
    -- The tree, grown leaf by leaf; each checkpoint checked before its own leaf goes in.
    SELECT t.size, t.edge INTO v_size, v_edge FROM public.fleet_trees t WHERE t.node_id = p_node;
    IF NOT FOUND THEN
        v_size := 0;
        v_edge := '{}';
    END IF;
    SELECT n.verifier_key INTO v_key FROM public.fleet_nodes n WHERE n.node_id = p_node;
    FOR r IN SELECT b.seq, b.kind, coalesce(b.note, '') AS note,
                    sha256('\x00'::bytea || decode(b.hash, 'hex')) AS leaf
             FROM unnest(p_events) b WHERE b.seq > v_start ORDER BY b.seq LOOP
        IF r.kind = 'checkpoint' THEN
            v_cp_size := split_part(r.note, E'\n', 2);
            v_cp_root := split_part(r.note, E'\n', 3);
            IF v_cp_size <> v_size::TEXT THEN
                refused := format('seq %s: a checkpoint of size %s where the store''s tree has %s events',
                                  r.seq, left(v_cp_size, 24), v_size);
            ELSIF v_cp_root <> encode(public.fleet_root(v_edge), 'base64') THEN
                refused := format('seq %s: a checkpoint whose root is not the root of the %s events the store holds before it',
                                  r.seq, v_size);
            ELSIF v_key IS NULL THEN
                refused := format('seq %s: a checkpoint from a node registered without a verifier key',
                                  r.seq);
            ELSIF NOT public.fleet_note_signed(r.note, v_key) THEN
                refused := format('seq %s: a checkpoint not signed by the node''s registered key %s',
                                  r.seq, split_part(v_key, '+', 1) || '+' || split_part(v_key, '+', 2));
            END IF;
            IF refused IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'TGREF', MESSAGE = refused;
            END IF;
        END IF;
        v_leaf := r.leaf;
        v_bits := v_size;
        WHILE v_bits & 1 = 1 LOOP
            v_leaf := sha256('\x01'::bytea || v_edge[cardinality(v_edge)] || v_leaf);
            v_edge := v_edge[1 : cardinality(v_edge) - 1];
            v_bits := v_bits >> 1;
        END LOOP;
        v_edge := v_edge || v_leaf;
        v_size := v_size + 1;
    END LOOP;
    INSERT INTO public.fleet_events (node_id,
        seq, event_id, ts, kind, decision_id, session_id, task_type, actor_id, actor_kind, tool,
        action, resource_type, resource_id, args_hash, rewritten_args_hash, outcome, reason,
        policy_ids, policy_version, shadow_outcome, shadow_reason, max_output_chars, timeout_ms,
        duration_us, result_bytes, truncated, status, error, request, note, prev_hash, hash)
    SELECT p_node,
        b.seq, b.event_id, b.ts, b.kind, b.decision_id, b.session_id, b.task_type, b.actor_id, b.actor_kind, b.tool,
        b.action, b.resource_type, b.resource_id, b.args_hash, b.rewritten_args_hash, b.outcome, b.reason,
        b.policy_ids, b.policy_version, b.shadow_outcome, b.shadow_reason, b.max_output_chars, b.timeout_ms,
        b.duration_us, b.result_bytes, b.truncated, b.status, b.error, b.request, b.note, b.prev_hash, b.hash
    FROM unnest(p_events) b
    WHERE b.seq > v_start
    ORDER BY b.seq;
    GET DIAGNOSTICS stored = ROW_COUNT;
    IF stored > 0 THEN
        INSERT INTO public.fleet_trees AS t (node_id, size, hash, edge)
            SELECT p_node, v_size, b.hash, v_edge FROM unnest(p_events) b WHERE b.seq = v_size
            ON CONFLICT (node_id) DO UPDATE
                SET size = excluded.size, hash = excluded.hash, edge = excluded.edge;
    END IF;
    head := v_start + stored;
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

-- Where a node's cosignatures stand: the smallest, over the witnesses the store has
-- cosignatures of for the node, of the last checkpoint seq each cosigned (0 when none). A
-- shipper sends what it holds after it; a resent cosignature is taken once.
CREATE FUNCTION fleet_cosigned(p_node TEXT) RETURNS BIGINT
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT coalesce(min(w.last), 0) FROM (
        SELECT max(c.seq) AS last FROM public.fleet_cosignatures c WHERE c.node_id = p_node
        GROUP BY c.witness) w
$$;

-- Takes witnesses' cosignatures of a node's stored checkpoint events (arrays of one length,
-- in step): refuses the whole call, and records why, when the caller may not ship for the
-- node, a cosignature names an event that is not a stored checkpoint or another size than
-- the checkpoint's, or differs from the one the store holds for that checkpoint and witness.
-- PostgreSQL has no Ed25519, so the signatures themselves are checked by the auditors'
-- `toolgate verify --postgres --witness KEY` (docs/fleet.md). Returns the number stored.
CREATE FUNCTION fleet_cosign(p_node TEXT, p_seq BIGINT[], p_witness TEXT[], p_size BIGINT[],
    p_time BIGINT[], p_line TEXT[], OUT stored BIGINT, OUT refused TEXT)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    stored := 0;
    refused := public.fleet_caller(p_node);
    IF refused IS NOT NULL THEN
        RETURN;
    END IF;
    SELECT CASE
        WHEN e.seq IS NULL OR e.kind <> 'checkpoint' THEN
            format('seq %s: a cosignature of an event that is not a stored checkpoint', c.seq)
        WHEN split_part(e.note, E'\n', 2) <> c.size::TEXT THEN
            format('seq %s: a cosignature of size %s for a checkpoint of another size', c.seq, c.size)
        WHEN s.line IS NOT NULL AND s.line IS DISTINCT FROM c.line THEN
            format('seq %s: a cosignature by the same witness unlike the one the store holds', c.seq)
        END INTO refused
    FROM unnest(p_seq, p_witness, p_size, p_time, p_line) AS c(seq, witness, size, time, line)
    LEFT JOIN public.fleet_events e ON e.node_id = p_node AND e.seq = c.seq
    LEFT JOIN public.fleet_cosignatures s
        ON s.node_id = p_node AND s.seq = c.seq AND s.witness = c.witness
    WHERE e.seq IS NULL OR e.kind <> 'checkpoint' OR split_part(e.note, E'\n', 2) <> c.size::TEXT
       OR (s.line IS NOT NULL AND s.line IS DISTINCT FROM c.line)
    ORDER BY c.seq LIMIT 1;
    IF refused IS NOT NULL OR p_line IS NULL OR cardinality(p_seq) IS DISTINCT FROM cardinality(p_line)
       OR cardinality(p_seq) IS DISTINCT FROM cardinality(p_witness) THEN
        refused := coalesce(refused, 'cosignatures whose arrays are not in step');
        INSERT INTO public.fleet_alarms (node_id, db_role, seq, what)
            VALUES (p_node, session_user, (regexp_match(refused, '^seq (\d+)'))[1]::BIGINT, refused);
        RAISE WARNING 'fleet alarm: node %, role %: %', p_node, session_user, refused;
        RETURN;
    END IF;
    INSERT INTO public.fleet_cosignatures (node_id, seq, witness, size, time, line)
        SELECT p_node, c.seq, c.witness, c.size, c.time, c.line
        FROM unnest(p_seq, p_witness, p_size, p_time, p_line) AS c(seq, witness, size, time, line)
        ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS stored = ROW_COUNT;
END $$;

REVOKE ALL ON FUNCTION fleet_ingest(TEXT, fleet_event[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet_cosign(TEXT, BIGINT[], TEXT[], BIGINT[], BIGINT[], TEXT[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet_cosigned(TEXT) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet_caller(TEXT) FROM PUBLIC;
REVOKE ALL ON FUNCTION fleet_head(TEXT) FROM PUBLIC;
