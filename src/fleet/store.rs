//! The fleet store through sqlx (PostgreSQL): the nodes' registry, and the events, trees,
//! cosignatures and alarms as the auditors' tools read them. Batches come in through the ingest
//! service (`super::ingest`), which checks them before it writes.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{AssertSqlSafe, Row};

use crate::query::{Stats, Tally, TrailHead, tally_sql};

use crate::trail::Filter;
use crate::trail::{COLUMNS, CellError, Cells, Event, Type, Value};

/// What can go wrong with the store. Messages never carry the URL (nor its password).
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("the fleet store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("the fleet store's schema: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("an event of the fleet store does not read: {0}")]
    Cell(#[from] CellError),
    #[error("no randomness for a token: {0}")]
    Random(getrandom::Error),
    #[error("node {0:?} is not registered")]
    NoSuchNode(String),
    /// The store changed between a decision and the act it decided (nothing was done).
    #[error("the fleet store changed meanwhile: {0}")]
    Changed(String),
}

/// One node as the store knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeStatus {
    pub node_id: String,
    /// The database role it shipped as, when it was registered before the ingest service.
    pub db_role: Option<String>,
    pub verifier_key: Option<String>,
    /// Its token was revoked: nothing it ships is taken.
    pub revoked: bool,
    pub last_seq: i64,
    /// When the last event arrived (RFC 3339), and its own time on the node.
    pub last_received: Option<String>,
    pub last_ts: Option<String>,
    /// The last checkpoint event's seq.
    pub last_checkpoint: Option<i64>,
    /// The tree size of the last checkpoint witnesses cosigned, and how many cosigned it.
    pub cosigned_size: Option<i64>,
    pub witnesses: i64,
    pub alarms: i64,
}

/// A partition of the events: its table's name and the arrival times it takes, from (inclusive)
/// and to (exclusive), `None` for unbounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// The alarms a fleet store holds: how many, and the last of them.
#[derive(Debug, Clone)]
pub struct Alarms {
    pub count: i64,
    /// Oldest first.
    pub last: Vec<Alarm>,
}

/// A refused call, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alarm {
    pub at: String,
    /// The node the call claimed to be of.
    pub node_id: String,
    /// The node whose token made the call (the database role, for alarms from before the
    /// ingest service), and the peer's address.
    pub shipper: Option<String>,
    pub peer: Option<String>,
    pub seq: Option<i64>,
    pub what: String,
}

/// A connection pool to the store.
#[derive(Debug, Clone)]
pub struct FleetStore {
    pool: PgPool,
}

/// The columns of `fleet_events` that are the trail's, in table order.
fn columns() -> String {
    COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

impl FleetStore {
    fn options(url: &str) -> Result<PgPoolOptions, FleetError> {
        PgConnectOptions::from_str(url)?;
        Ok(PgPoolOptions::new().max_connections(4).acquire_timeout(Duration::from_secs(5)))
    }

    /// Connects now (the auditors' tools: a store that is not there is an error at once).
    pub async fn connect(url: &str) -> Result<Self, FleetError> {
        Ok(Self { pool: Self::options(url)?.connect(url).await? })
    }

    /// Connects when first used, keeping at most `connections` (the ingest and audit-only
    /// servers: a store that is down must not stop a start).
    pub fn lazy(url: &str, connections: u32) -> Result<Self, FleetError> {
        let options = Self::options(url)?.max_connections(connections);
        Ok(Self { pool: options.connect_lazy(url)? })
    }

    /// Applies the schema's migrations.
    pub async fn migrate(&self) -> Result<(), FleetError> {
        Ok(super::schema::migrate(&self.pool).await?)
    }

    /// The pool, for the ingest service's writer.
    pub(super) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Registers a node with its checkpoint verifier key, and returns the token its shipper
    /// presents to the ingest service (the store keeps only its hash). The node's tree row
    /// goes in with it: the ingest service locks it for every batch of the node.
    pub async fn register(&self, node: &str, key: Option<&str>) -> Result<String, FleetError> {
        let token = super::token::issue().map_err(FleetError::Random)?;
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO fleet_nodes (node_id, verifier_key, token_hash) VALUES ($1, $2, $3)",
        )
        .bind(node)
        .bind(key)
        .bind(super::token::hash(&token))
        .execute(&mut *tx)
        .await?;
        sqlx::query("INSERT INTO fleet_trees (node_id, size, hash, edge) VALUES ($1, 0, $2, '{}')")
            .bind(node)
            .bind(hex::encode(crate::trail::GENESIS_HASH))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(token)
    }

    /// Issues a registered node a new token (the old one stops working), lifting a revocation,
    /// and sets its verifier key when one is given.
    pub async fn reissue(&self, node: &str, key: Option<&str>) -> Result<String, FleetError> {
        let token = super::token::issue().map_err(FleetError::Random)?;
        let done = sqlx::query(
            "UPDATE fleet_nodes SET token_hash = $2, revoked_at = NULL,
                 verifier_key = coalesce($3, verifier_key) WHERE node_id = $1",
        )
        .bind(node)
        .bind(super::token::hash(&token))
        .bind(key)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(FleetError::NoSuchNode(node.to_owned()));
        }
        Ok(token)
    }

    /// Revokes a node's token: the ingest service refuses it from its next batch on.
    pub async fn revoke(&self, node: &str) -> Result<(), FleetError> {
        let done = sqlx::query(
            "UPDATE fleet_nodes SET revoked_at = coalesce(revoked_at, now()) WHERE node_id = $1",
        )
        .bind(node)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(FleetError::NoSuchNode(node.to_owned()));
        }
        Ok(())
    }

    /// The last seq the store holds for `node` (0 for none), and its hash.
    pub async fn head(&self, node: &str) -> Result<(i64, Option<String>), FleetError> {
        let row = sqlx::query("SELECT size, hash FROM fleet_trees WHERE node_id = $1 AND size > 0")
            .bind(node)
            .fetch_optional(&self.pool)
            .await?;
        match row {
            Some(row) => Ok((row.try_get(0)?, row.try_get(1)?)),
            None => Ok((0, None)),
        }
    }

    /// The cosignature lines the store holds for `node`'s checkpoint event at `seq`.
    pub async fn cosignature_lines(&self, node: &str, seq: i64) -> Result<Vec<String>, FleetError> {
        let rows = sqlx::query(
            "SELECT line FROM fleet_cosignatures WHERE node_id = $1 AND seq = $2 ORDER BY witness",
        )
        .bind(node)
        .bind(seq)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| Ok(row.try_get(0)?)).collect()
    }

    /// Every registered node, with what the store holds of it.
    pub async fn nodes(&self) -> Result<Vec<NodeStatus>, FleetError> {
        let rows = sqlx::query(
            "SELECT n.node_id, n.db_role, n.verifier_key, n.revoked_at IS NOT NULL,
                    coalesce(h.seq, 0), to_char(h.received_at AT TIME ZONE 'UTC',
                    'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), h.ts,
                    (SELECT max(c.seq) FROM fleet_events c
                     WHERE c.node_id = n.node_id AND c.kind = 'checkpoint'),
                    (SELECT count(*) FROM fleet_alarms a WHERE a.node_id = n.node_id),
                    w.size, coalesce(w.witnesses, 0)
             FROM fleet_nodes n
             LEFT JOIN LATERAL (SELECT e.seq, e.received_at, e.ts FROM fleet_events e
                                WHERE e.node_id = n.node_id ORDER BY e.seq DESC LIMIT 1) h
                    ON true
             LEFT JOIN LATERAL (SELECT max(c.size) AS size, count(*) AS witnesses
                                FROM fleet_cosignatures c WHERE c.node_id = n.node_id
                                AND c.seq = (SELECT max(l.seq) FROM fleet_cosignatures l
                                             WHERE l.node_id = n.node_id)) w
                    ON true
             ORDER BY n.node_id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(NodeStatus {
                    node_id: row.try_get(0)?,
                    db_role: row.try_get(1)?,
                    verifier_key: row.try_get(2)?,
                    revoked: row.try_get(3)?,
                    last_seq: row.try_get(4)?,
                    last_received: row.try_get(5)?,
                    last_ts: row.try_get(6)?,
                    last_checkpoint: row.try_get(7)?,
                    alarms: row.try_get(8)?,
                    cosigned_size: row.try_get(9)?,
                    witnesses: row.try_get(10)?,
                })
            })
            .collect()
    }

    /// How many alarms are recorded, and the last `limit` of them, oldest first (a hostile
    /// node can make many: they are never all read at once).
    pub async fn alarms(&self, limit: u32) -> Result<Alarms, FleetError> {
        let count = sqlx::query("SELECT count(*) FROM fleet_alarms").fetch_one(&self.pool).await?;
        let count: i64 = count.try_get(0)?;
        let rows = sqlx::query(
            "SELECT * FROM (
                 SELECT id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
                        node_id, coalesce(shipper, db_role), peer, seq, what
                 FROM fleet_alarms ORDER BY id DESC LIMIT $1) a
             ORDER BY id",
        )
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Alarm {
                    at: row.try_get(1)?,
                    node_id: row.try_get(2)?,
                    shipper: row.try_get(3)?,
                    peer: row.try_get(4)?,
                    seq: row.try_get(5)?,
                    what: row.try_get(6)?,
                })
            })
            .collect::<Result<_, FleetError>>()
            .map(|last| Alarms { count, last })
    }

    /// At most `limit` events matching `filter`, of `node` or of every node, after the place
    /// `after` (node id, seq), in (node id, seq) order; each with its node id.
    pub async fn query(
        &self,
        node: Option<&str>,
        filter: &Filter,
        after: (&str, i64),
        limit: u32,
    ) -> Result<Vec<(String, Event)>, FleetError> {
        self.page(node, filter, ">", Some(after), "node_id, seq", limit).await
    }

    /// At most `limit` events matching `filter`, of `node` or of every node, before the place
    /// `before` (node id, seq; anywhere when `None`), newest first: in descending (node id,
    /// seq) order.
    pub async fn query_newest(
        &self,
        node: Option<&str>,
        filter: &Filter,
        before: Option<(&str, i64)>,
        limit: u32,
    ) -> Result<Vec<(String, Event)>, FleetError> {
        self.page(node, filter, "<", before, "node_id DESC, seq DESC", limit).await
    }

    /// A page from the place `at` (`beyond` it: `>` or `<`; anywhere when `None`), in `order`:
    /// both literals of this file, never input.
    ///
    /// With a time filter, the page is asked of each partition on its own (one arm of a
    /// `UNION ALL` per partition, each pruned to it by its arrival range) and the arms merged:
    /// asked of the whole table at once, PostgreSQL walks a partition that holds no match (an
    /// older month, for `--since` a day back) key by key to the end before it answers
    /// (BENCHMARKS.md, "Fleets: the ingest service"), while planned alone, each partition
    /// reads its matches from the time index when they are few.
    async fn page(
        &self,
        node: Option<&str>,
        filter: &Filter,
        beyond: &'static str,
        at: Option<(&str, i64)>,
        order: &'static str,
        limit: u32,
    ) -> Result<Vec<(String, Event)>, FleetError> {
        let bound = if at.is_some() { 2 } else { 0 };
        let (conditions, values) = conditions(node, filter, bound);
        let place = match at {
            Some(_) => format!("(node_id, seq) {beyond} ($1, $2)"),
            None => "true".to_owned(),
        };
        let timed = filter.since.is_some() || filter.until.is_some();
        let partitions = if timed { self.partitions().await? } else { Vec::new() };
        let arm = |range: &str| {
            format!(
                "SELECT node_id, {} FROM fleet_events WHERE {place}{conditions}{range}
                 ORDER BY {order} LIMIT {limit}",
                columns()
            )
        };
        // The partitions' bounds are bound after the filter's values.
        let mut ranges = Vec::new();
        let mut next = bound + values.len() + 1;
        for Partition { from, to, .. } in &partitions {
            let mut range = String::new();
            if from.is_some() {
                range.push_str(&format!(" AND received_at >= ${next}::timestamptz"));
                next += 1;
            }
            if to.is_some() {
                range.push_str(&format!(" AND received_at < ${next}::timestamptz"));
                next += 1;
            }
            ranges.push(range);
        }
        let sql = if ranges.len() > 1 {
            let arms: Vec<String> = ranges.iter().map(|r| format!("({})", arm(r))).collect();
            format!("SELECT * FROM ({}) p ORDER BY {order} LIMIT {limit}", arms.join(" UNION ALL "))
        } else {
            arm("")
        };
        let mut query = sqlx::query(AssertSqlSafe(sql));
        if let Some((node, seq)) = at {
            query = query.bind(node).bind(seq);
        }
        for value in values {
            query = query.bind(value);
        }
        if ranges.len() > 1 {
            for bound in partitions.into_iter().flat_map(|p| [p.from, p.to]).flatten() {
                query = query.bind(bound);
            }
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter().map(|row| Ok((row.try_get(0)?, event(row)?))).collect()
    }

    /// The events' partitions, by name, with their arrival ranges (each bound a timestamp or
    /// unbounded: `MINVALUE`, `MAXVALUE`), as PostgreSQL's catalog writes them; none when a
    /// partition is not one the store makes (a DEFAULT partition: the table as one, then).
    pub(super) async fn partitions(&self) -> Result<Vec<Partition>, FleetError> {
        let rows = sqlx::query(
            "SELECT c.relname::TEXT, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i
             JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = 'public.fleet_events'::regclass ORDER BY c.relname",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut partitions = Vec::new();
        for row in rows {
            let bound: String = row.try_get(1)?;
            if !bound.starts_with("FOR VALUES FROM (") {
                return Ok(Vec::new());
            }
            // `FOR VALUES FROM ('…') TO ('…')`, either side possibly MINVALUE or MAXVALUE.
            let side = |after: &str| {
                let rest = &bound[bound.find(after)? + after.len()..];
                let value = &rest[..rest.find(')')?];
                value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')).map(str::to_owned)
            };
            partitions.push(Partition {
                name: row.try_get(0)?,
                from: side("FROM ("),
                to: side("TO ("),
            });
        }
        Ok(partitions)
    }

    /// Counts of the events `range` selects, of `node` or of the whole fleet, by outcome, tool,
    /// actor and kind.
    pub async fn stats(&self, node: Option<&str>, range: &Filter) -> Result<Stats, FleetError> {
        let (conditions, values) = conditions(node, range, 0);
        let mut stats = Stats::default();
        let groups = [
            (crate::query::DECISION_OUTCOME, &mut stats.by_outcome),
            ("tool", &mut stats.by_tool),
            ("actor_id", &mut stats.by_actor),
            ("kind", &mut stats.by_kind),
        ];
        for (column, counts) in groups {
            // `column` is one of the literals above, never input.
            let sql = format!(
                "SELECT {column}, count(*) FROM fleet_events WHERE {column} IS NOT NULL{conditions}
                 GROUP BY {column} ORDER BY count(*) DESC, {column}"
            );
            let mut query = sqlx::query(AssertSqlSafe(sql));
            for value in &values {
                query = query.bind(value);
            }
            for row in query.fetch_all(&self.pool).await? {
                counts.push((row.try_get(0)?, row.try_get::<i64, _>(1)?.unsigned_abs()));
            }
        }
        stats.total = stats.by_kind.iter().map(|(_, n)| n).sum();
        Ok(stats)
    }

    /// At most `limit` of `node`'s events after `after`, in seq order.
    pub async fn events(
        &self,
        node: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Event>, FleetError> {
        let page = self.query(Some(node), &Filter::default(), (node, after), limit).await?;
        Ok(page.into_iter().map(|(_, event)| event).collect())
    }

    /// `node`'s event at `seq`, if the store holds it.
    pub async fn event(&self, node: &str, seq: i64) -> Result<Option<Event>, FleetError> {
        Ok(self.events(node, seq - 1, 1).await?.into_iter().next().filter(|e| e.seq == seq))
    }

    /// `node`'s last checkpoint event, if it shipped any.
    pub async fn last_checkpoint(&self, node: &str) -> Result<Option<Event>, FleetError> {
        let sql = format!(
            "SELECT node_id, {} FROM fleet_events WHERE node_id = $1 AND kind = 'checkpoint'
             ORDER BY seq DESC LIMIT 1",
            columns()
        );
        let row = sqlx::query(AssertSqlSafe(sql)).bind(node).fetch_optional(&self.pool).await?;
        row.as_ref().map(event).transpose()
    }

    /// Each node's last stored `seq`.
    pub async fn heads(&self) -> Result<Vec<TrailHead>, FleetError> {
        let rows =
            sqlx::query("SELECT node_id, size FROM fleet_trees WHERE size > 0 ORDER BY node_id")
                .fetch_all(&self.pool)
                .await?;
        rows.iter()
            .map(|row| Ok(TrailHead { node: row.try_get(0)?, seq: row.try_get(1)? }))
            .collect()
    }

    /// The tally of `node`'s events after `after` up to `through` whose `ts` is `since` or
    /// later.
    pub async fn tally(
        &self,
        node: &str,
        after: i64,
        through: i64,
        since: &str,
    ) -> Result<Vec<Tally>, FleetError> {
        let sql = numbered(&tally_sql("fleet_events", true), 0);
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(node)
            .bind(after)
            .bind(through)
            .bind(since)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| {
                Ok(Tally {
                    minute: row.try_get(0)?,
                    kind: row.try_get(1)?,
                    outcome: row.try_get(2)?,
                    tool: row.try_get(3)?,
                    actor_id: row.try_get(4)?,
                    count: row.try_get::<i64, _>(5)?.unsigned_abs(),
                })
            })
            .collect()
    }

    /// The smallest `seq` of `node`'s events appended at `since` or later.
    pub async fn first_seq_since(
        &self,
        node: &str,
        since: &str,
    ) -> Result<Option<i64>, FleetError> {
        let row = sqlx::query("SELECT min(seq) FROM fleet_events WHERE node_id = $1 AND ts >= $2")
            .bind(node)
            .bind(since)
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get(0)?)
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// The conditions ` AND …` of a node (when given) and a filter, their placeholders numbered
/// from `$(bound + 1)` (after the `bound` ones the statement binds first), and their values in
/// order.
fn conditions(node: Option<&str>, filter: &Filter, bound: usize) -> (String, Vec<String>) {
    let (filtered, filter_values) = crate::query::filter_sql(filter);
    let mut sql = String::new();
    let mut values = Vec::new();
    if let Some(node) = node {
        sql.push_str(" AND node_id = ?");
        values.push(node.to_owned());
    }
    sql.push_str(&filtered);
    values.extend(filter_values);
    (numbered(&sql, bound), values)
}

/// Standard SQL's `?` placeholders as PostgreSQL's, numbered from `$(bound + 1)`.
fn numbered(sql: &str, bound: usize) -> String {
    let mut numbered = String::new();
    for (i, piece) in sql.split('?').enumerate() {
        if i > 0 {
            numbered.push_str(&format!("${}", bound + i));
        }
        numbered.push_str(piece);
    }
    numbered
}

/// The event of a row whose columns after the first are the trail's, in table order.
fn event(row: &PgRow) -> Result<Event, FleetError> {
    let mut integers = [None; COLUMNS.len()];
    let mut texts: Vec<Option<String>> = vec![None; COLUMNS.len()];
    for (i, column) in COLUMNS.iter().enumerate() {
        match column.ty {
            Type::Integer => integers[i] = row.try_get::<Option<i64>, _>(i + 1)?,
            Type::Text => texts[i] = row.try_get::<Option<String>, _>(i + 1)?,
        }
    }
    let mut cells: Cells<'_> = [None; COLUMNS.len()];
    for (i, cell) in cells.iter_mut().enumerate() {
        *cell = match (integers[i], &texts[i]) {
            (Some(n), _) => Some(Value::Integer(n)),
            (None, Some(text)) => Some(Value::Text(text.as_bytes())),
            (None, None) => None,
        };
    }
    Ok(Event::from_cells(&cells)?)
}
