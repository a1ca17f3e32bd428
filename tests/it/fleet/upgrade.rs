//! `toolgate fleet migrate` over a store as direct shipping left it: the events stored by the
//! old in-database checks stay where they are (the same tuples, not copied, not rewritten),
//! the table becomes partitioned around them, the SQL cryptography is gone, and the node ships
//! on through the ingest service from where it stood once it has a token.

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{Executor, PgPool, Row, SqlSafeStr};

use crate::fleet::ingest::{GENESIS, chain, ship};
use crate::fleet::{Ingest, cluster};
use crate::helpers::toolgate_async;

/// The store at its second migration: what `fleet migrate` made before the ingest service.
fn direct_shipping() -> Migrator {
    let migration = |version, name: &str, sql: &'static str| {
        Migration::new(
            version,
            name.to_owned().into(),
            MigrationType::Simple,
            sql.into_sql_str(),
            false,
        )
    };
    Migrator::with_migrations(vec![
        migration(1, "ed25519", include_str!("../../../migrations/postgres/0001_ed25519.sql")),
        migration(2, "fleet", include_str!("../../../migrations/postgres/0002_fleet.sql")),
    ])
}

async fn tuples(pool: &PgPool) -> Vec<(String, String, i64)> {
    sqlx::query("SELECT ctid::TEXT, xmin::TEXT, seq FROM fleet_events ORDER BY seq")
        .fetch_all(pool)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directly_shipped_store_migrates_without_a_row_rewritten_and_ships_on() {
    let base = cluster();
    let name = format!("tg_{}", uuid::Uuid::now_v7().simple());
    let admin = PgPool::connect(&base).await.unwrap();
    admin.execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).await.unwrap();
    admin.close().await;
    let url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);
    let pool = PgPool::connect(&url).await.unwrap();
    direct_shipping().run(&pool).await.unwrap();
    // Node a, shipping as this very role, through the old in-database checks.
    sqlx::query("INSERT INTO fleet_nodes (node_id, db_role) VALUES ('a', current_user)")
        .execute(&pool)
        .await
        .unwrap();
    let events = chain(1, 60, GENESIS, "t");
    let json = serde_json::to_string(&events[..50]).unwrap();
    let row = sqlx::query(
        "SELECT stored, refused FROM fleet_ingest('a', (SELECT array_agg(e ORDER BY e.seq) \
         FROM json_populate_recordset(NULL::fleet_event, $1::json) e))",
    )
    .bind(json)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((row.get::<i64, _>(0), row.get::<Option<String>, _>(1)), (50, None));
    let before = tuples(&pool).await;

    let out = toolgate_async(&["fleet", "migrate", "--postgres", &url]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tuples(&pool).await, before, "the same tuples: none copied, none rewritten");
    let kind: String =
        sqlx::query_scalar("SELECT relkind::TEXT FROM pg_class WHERE relname = 'fleet_events'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(kind, "p", "partitioned");
    let gone: bool = sqlx::query_scalar(
        "SELECT to_regproc('ed25519_verify') IS NULL AND to_regproc('fleet_ingest') IS NULL",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(gone, "no cryptography, no checks left in SQL");
    let refused = sqlx::query("UPDATE fleet_events SET tool = 'x' WHERE seq = 1").execute(&pool);
    assert!(refused.await.unwrap_err().to_string().contains("append-only"));

    // The node needs a token now; it ships on from seq 50 through the ingest service.
    let ingest = Ingest::start(&url).await;
    let out =
        toolgate_async(&["fleet", "register", "--postgres", &url, "--node", "a", "--reissue"])
            .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let answers = ship(&ingest.url, &token, "a", vec![events[45..].to_vec()]).await;
    assert_eq!(answers[0].as_ref().unwrap(), &(60, 10));
    let out = toolgate_async(&["verify", "--postgres", &url]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("60 events"), "{stdout}");
    pool.close().await;
}
