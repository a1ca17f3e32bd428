//! Keyed argument hashes: HMAC-SHA256 under a key from a file, named by its key id, reproducible
//! with `toolgate hash-args` and the Audit RPC, and checkable across a key rotation.

use std::path::Path;

use toolgate::config::{ArgsHashConfig, Config};
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::{ExecuteRequest, ExecutionStatus, HashArgsRequest};

use crate::helpers::{request, start, toolgate_async};

const ARGS: &str = r#"{"path":"/etc/secrets.env"}"#;

fn keyed(db: &Path, key_file: &Path) -> Config {
    Config {
        db: db.to_owned(),
        args_hash: ArgsHashConfig { key_file: Some(key_file.to_owned()), ..Default::default() },
        ..Config::default()
    }
}

async fn hash_args(extra: &[&str]) -> String {
    let mut args = vec!["hash-args", ARGS];
    args.extend(extra);
    let out = toolgate_async(&args).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn keyed_hashes_are_reproducible_and_survive_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let (old_key, new_key) = (dir.path().join("k1"), dir.path().join("k2"));
    std::fs::write(&old_key, "first secret key\n").unwrap();
    std::fs::write(&new_key, "second secret key\n").unwrap();
    let db = dir.path().join("trail.db");
    let mut req = request("read");
    req.args_json = ARGS.into();

    let mut app = start(keyed(&db, &old_key), dir).await;
    let before = app.decide(req.clone()).await;
    let report = ExecuteRequest {
        decision_id: before.decision_id.clone(),
        args_json: ARGS.into(),
        status: ExecutionStatus::Ok as i32,
        ..Default::default()
    };
    let executed = app.client.execute(report).await.unwrap().into_inner();
    let (dir, _) = app.stop().await;
    let mut app = start(keyed(&db, &new_key), dir).await;
    let after = app.decide(req).await;
    let by_rpc = AuditClient::new(app.channel.clone())
        .hash_args(HashArgsRequest { args_json: ARGS.into() })
        .await
        .unwrap()
        .into_inner();

    assert!(before.args_hash.starts_with("hmac-sha256:"), "{}", before.args_hash);
    assert_eq!(executed.violation, "", "Execute hashes with the same key");
    assert_ne!(before.args_hash, after.args_hash);
    assert_eq!(hash_args(&["--key-file", old_key.to_str().unwrap()]).await, before.args_hash);
    assert_eq!(hash_args(&["--key-file", new_key.to_str().unwrap()]).await, after.args_hash);
    assert_eq!(by_rpc.args_hash, after.args_hash);
    assert_eq!(by_rpc.canonical_json, ARGS);
    let plain = hash_args(&[]).await;
    assert_eq!(plain.len(), 64, "plain SHA-256 without a key: {plain}");
    let stored: Vec<String> = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut stmt =
            conn.prepare("SELECT args_hash FROM events WHERE kind = 'decision'").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(stored, [before.args_hash, after.args_hash]);
}

#[tokio::test]
async fn a_missing_key_stops_the_start_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("t.toml");
    std::fs::write(&config, "[args_hash]\nkey_env = \"TOOLGATE_TEST_NO_SUCH_KEY\"\n").unwrap();
    let db = dir.path().join("trail.db");
    let out = toolgate_async(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--db",
        db.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("TOOLGATE_TEST_NO_SUCH_KEY` is not set"), "{stderr}");
}
