//! The command line's exit codes, as `diff` and `grep` have them: 0 intact or allowed, 1 a
//! problem found, 2 trouble (a wrong flag, a file that does not read, a server that cannot be
//! reached); and what it prints that a person reads: `stats` counting decisions only, `query`
//! showing a whole reason and a shadow policy's answer, a warning for a password on the
//! command line.

use toolgate::proto::{ApprovalState, ListPendingRequest, VerdictRequest};

use crate::approvals::deploys_need_approval;
use crate::helpers::{request, spawn_app, spawn_app_with, toolgate_async};

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap()
}

#[tokio::test]
async fn intact_is_0_a_problem_found_is_1_and_trouble_is_2() {
    let mut app = spawn_app().await;
    app.decide(request("read")).await;
    let db = app.db.to_str().unwrap().to_owned();
    let dir = app.dir.path().to_owned();

    assert_eq!(code(&toolgate_async(&["verify", "--db", &db]).await), 0, "intact");
    // Trouble, never "broken": a file that is not there, a flag that does not exist, a server
    // that cannot be reached, a key that does not parse.
    let missing = dir.join("no-such.db");
    let troubles = [
        toolgate_async(&["verify", "--db", missing.to_str().unwrap()]).await,
        toolgate_async(&["verify", "--dbb", &db]).await,
        toolgate_async(&["verify", "--server", "http://127.0.0.1:1"]).await,
        toolgate_async(&["verify", "--db", &db, "--key", "not-a-key"]).await,
        toolgate_async(&["policy", "check", dir.join("none.cedar").to_str().unwrap()]).await,
    ];
    for out in &troubles {
        assert_eq!(code(out), 2, "{}", String::from_utf8_lossy(&out.stderr));
    }
    // A problem found: a changed event; a denied call; a policy that does not check.
    let (_dir, _) = app.stop().await;
    let conn = rusqlite::Connection::open(&db).unwrap();
    let tamper = "DROP TRIGGER events_no_update; UPDATE events SET tool = 'bash' WHERE seq = 2;";
    conn.execute_batch(tamper).unwrap();
    drop(conn);
    assert_eq!(code(&toolgate_async(&["verify", "--db", &db]).await), 1, "broken");
    let denied = toolgate_async(&["decide", "--tool", "write", "--args", r#"{"path":"a"}"#]).await;
    assert_eq!(code(&denied), 1, "a denied call");
    let broken = dir.join("broken.cedar");
    std::fs::write(&broken, "permit(").unwrap();
    assert_eq!(code(&toolgate_async(&["policy", "check", broken.to_str().unwrap()]).await), 1);
}

#[tokio::test]
async fn stats_counts_decisions_by_outcome_and_not_the_verdicts_beside_them() {
    let mut app = spawn_app_with(deploys_need_approval).await;
    let mut deploy = request("deploy");
    deploy.actor.as_mut().unwrap().id = "alice".into();
    let held = app.decide(deploy).await;
    app.decide(request("read")).await;
    let mut approvals =
        toolgate::proto::approvals_client::ApprovalsClient::new(app.channel.clone());
    approvals
        .approve(VerdictRequest {
            decision_id: held.decision_id.clone(),
            approver: "carol".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let pending = approvals.list_pending(ListPendingRequest::default()).await.unwrap();
    assert!(pending.into_inner().approvals.iter().all(|a| a.state() != ApprovalState::Pending));

    let db = app.db.to_str().unwrap().to_owned();
    let out = toolgate_async(&["stats", "--db", &db, "--json"]).await;
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        stats["by_outcome"],
        serde_json::json!({"allow": 1, "require_approval": 1}),
        "two decisions, whatever the approval's events say: {stats}"
    );
}

#[tokio::test]
async fn query_shows_a_long_reason_whole_and_the_shadow_policys_answer() {
    let mut app = spawn_app_with(|c| {
        let candidate = c.db.with_file_name("candidate.cedar");
        std::fs::write(
            &candidate,
            "@id(\"no-reads\") @reason(\"reads are going away at the end of the quarter, ask the platform team\") \
             forbid (principal, action, resource);",
        )
        .unwrap();
        c.shadow_policy = Some(candidate);
    })
    .await;
    let mut write = request("write");
    write.args_json = r#"{"path":"a.txt"}"#.into();
    app.decide(write).await;
    let db = app.db.to_str().unwrap().to_owned();
    let out = toolgate_async(&["query", "--db", &db, "--kind", "decision"]).await;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("    shadow: deny: reads are going away at the end of the quarter, ask the platform team"), "{shown}");
    // The default policy's denial of a write, its reason longer than the table's cell.
    assert!(
        shown.contains("reason: tool requires allow_write=true: write") || !shown.contains('…'),
        "{shown}"
    );
}

#[tokio::test]
async fn a_password_on_the_command_line_is_warned_about_and_one_variable_names_the_store() {
    let url = "postgres://auditor:s3cret@127.0.0.1:1/toolgate";
    let out = toolgate_async(&["query", "--postgres", url]).await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("WARNING: the password in --postgres is on the command line"), "{said}");
    assert!(said.contains("TOOLGATE_POSTGRES_URL"), "{said}");
    assert!(!said.contains("s3cret"), "the password is never repeated: {said}");
    assert_eq!(code(&out), 2, "the store cannot be reached: trouble");
    let from_env = assert_cmd::Command::cargo_bin("toolgate")
        .unwrap()
        .env("TOOLGATE_POSTGRES_URL", url)
        .args(["fleet", "status"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&from_env.stderr);
    assert!(!said.contains("WARNING"), "{said}");
    assert_eq!(code(&from_env), 2, "{said}");
}
