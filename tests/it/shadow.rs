//! Shadow mode: a candidate policy evaluated beside the enforced one, recorded, never enforced.

use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::{Filter, Outcome, QueryRequest};

use crate::helpers::{request, rows, spawn_app_with, toolgate_async};

const CANDIDATE: &str = "@id(\"registered\") permit (principal, action, resource) when { context.tool.safety != \"unknown\" };\n\
    @id(\"no-grep\") @reason(\"grep is going away\") forbid (principal, action == Action::\"fs.search\", resource);";

#[tokio::test]
async fn a_shadow_disagreement_is_recorded_and_the_answer_is_unchanged() {
    let mut app = spawn_app_with(|c| {
        let candidate = c.db.with_file_name("candidate.cedar");
        std::fs::write(&candidate, CANDIDATE).unwrap();
        c.shadow_policy = Some(candidate);
    })
    .await;

    let grep = app.decide(request("grep")).await;
    let read = app.decide(request("read")).await;

    assert_eq!(grep.outcome(), Outcome::Allow, "the shadow never changes the answer");
    assert_eq!(read.outcome(), Outcome::Allow);
    let conn = rusqlite::Connection::open(&app.db).unwrap();
    let shadow: (String, String) = conn
        .query_row(
            "SELECT shadow_outcome, shadow_reason FROM events WHERE seq = ?1",
            [grep.seq as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(shadow, ("deny".to_owned(), "grep is going away".to_owned()));
    let loaded: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "policy_loaded").collect();
    assert_eq!(loaded.len(), 2);
    assert!(loaded[1].reason.as_deref().unwrap().starts_with("shadow: loaded 2 policies"));

    let disagreements = AuditClient::new(app.channel.clone())
        .query(QueryRequest {
            filter: Some(Filter { shadow_disagrees: true, ..Default::default() }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(disagreements.iter().map(|e| e.seq).collect::<Vec<_>>(), [grep.seq]);
    let db = app.db.to_str().unwrap().to_owned();
    let out = toolgate_async(&["query", "--db", &db, "--shadow-disagrees", "--json"]).await;
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
}
