//! Reloading the policy without a restart: through the Admin service and on SIGHUP; a broken
//! policy keeps the one in force.

use std::process::{Command, Stdio};
use std::time::Duration;

use tonic::Code;
use toolgate::proto::admin_client::AdminClient;
use toolgate::proto::{Outcome, ReloadPolicyRequest};

use crate::helpers::{request, rows, spawn_app_with};

const PERMIT_READS: &str =
    "@id(\"reads\") permit (principal, action == Action::\"fs.read\", resource);";
const FORBID_READS: &str =
    "@id(\"no-reads\") @reason(\"reads are off\") forbid (principal, action, resource);";

#[tokio::test]
async fn the_admin_service_puts_a_changed_policy_in_force_and_records_it() {
    let policy = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(policy.path(), PERMIT_READS).unwrap();
    let path = policy.path().to_owned();
    let mut app = spawn_app_with(|c| c.policy = Some(path)).await;
    let before = app.decide(request("read")).await;
    std::fs::write(policy.path(), FORBID_READS).unwrap();

    let reloaded = AdminClient::new(app.channel.clone())
        .reload_policy(ReloadPolicyRequest {})
        .await
        .unwrap()
        .into_inner();
    let after = app.decide(request("read")).await;

    assert_eq!(before.outcome(), Outcome::Allow);
    assert_ne!(reloaded.policy_version, before.policy_version);
    assert_eq!((after.outcome(), after.reason.as_str()), (Outcome::Deny, "reads are off"));
    assert_eq!(after.policy_version, reloaded.policy_version);
    let loaded: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "policy_loaded").collect();
    assert_eq!(loaded.len(), 2);
    assert_eq!(loaded[1].seq as u64, reloaded.seq);
}

#[tokio::test]
async fn a_broken_policy_keeps_the_one_in_force() {
    let policy = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(policy.path(), PERMIT_READS).unwrap();
    let path = policy.path().to_owned();
    let mut app = spawn_app_with(|c| c.policy = Some(path)).await;
    let before = app.decide(request("read")).await;
    std::fs::write(policy.path(), "permit (principal,").unwrap();

    let refused = AdminClient::new(app.channel.clone())
        .reload_policy(ReloadPolicyRequest {})
        .await
        .unwrap_err();
    let after = app.decide(request("read")).await;

    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(refused.message().starts_with("the policy in force stays"), "{}", refused.message());
    assert_eq!(after.outcome(), Outcome::Allow);
    assert_eq!(after.policy_version, before.policy_version);
    assert_eq!(rows(&app.db).iter().filter(|r| r.kind == "policy_loaded").count(), 1);
}

#[test]
fn sighup_reloads_and_sigterm_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (db, policy) = (dir.path().join("trail.db"), dir.path().join("policy.cedar"));
    std::fs::write(&policy, PERMIT_READS).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(assert_cmd::cargo::cargo_bin!("toolgate"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--db")
        .arg(&db)
        .arg("--policy")
        .arg(&policy)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let loaded = || {
        rusqlite::Connection::open(&db)
            .and_then(|c| {
                c.query_row("SELECT count(*) FROM events WHERE kind = 'policy_loaded'", [], |r| {
                    r.get::<_, i64>(0)
                })
            })
            .unwrap_or(0)
    };
    let wait_for = |n: i64| {
        for _ in 0..200 {
            if loaded() >= n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    let signal = |name: &str| {
        Command::new("kill").args([name, &server.id().to_string()]).status().unwrap();
    };

    let started = wait_for(1);
    std::fs::write(&policy, FORBID_READS).unwrap();
    signal("-HUP");
    let reloaded = wait_for(2);
    signal("-TERM");
    let status = server.wait().unwrap();

    assert!(started && reloaded, "policy_loaded events: {}", loaded());
    assert!(status.success(), "{status:?}");
    let (code, out) = crate::helpers::verify(&db);
    assert_eq!(code, 0, "{out}");
}
