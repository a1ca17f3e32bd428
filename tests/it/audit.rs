//! The auditors' side: Query, ExportCsv, Verify, Head and Stats over gRPC, and the `query`,
//! `export`, `verify` and `stats` commands, against a trail a running server writes.

use std::collections::BTreeSet;
use std::path::Path;

use sha2::{Digest, Sha256};
use tonic::Code;
use tonic::transport::Channel;
use toolgate::proto::audit_client::AuditClient;
use toolgate::proto::{
    Actor, DecideRequest, ExecuteRequest, ExecutionStatus, ExportRequest, Filter, HeadRequest,
    QueryRequest, Resource, StatsRequest, VerifyRequest,
};

use crate::helpers::{TestApp, request, rows, spawn_app, toolgate_async, with_options};

fn audit(app: &TestApp) -> AuditClient<Channel> {
    AuditClient::new(app.channel.clone())
}

/// A small varied trail: two sessions, two actors, allowed, denied and unknown tools, an
/// execution and a violation, a refused request.
async fn populate(app: &mut TestApp) {
    for (session, actor, tool) in [
        ("s1", "alice", "read"),
        ("s1", "alice", "write"),
        ("s2", "bob", "read"),
        ("s2", "bob", "bash"),
        ("s1", "bob", "grep"),
        ("s2", "alice", "nope"),
    ] {
        let mut req = request(tool);
        req.session_id = session.into();
        req.actor = Some(Actor { id: actor.into(), ..Default::default() });
        let decision = app.decide(req).await;
        if tool == "read" || tool == "bash" {
            let report = ExecuteRequest {
                decision_id: decision.decision_id,
                args_json: r#"{"path":"src/main.rs"}"#.into(),
                status: ExecutionStatus::Ok as i32,
                output: Some("ok".into()),
                ..Default::default()
            };
            app.client.execute(report).await.unwrap();
        }
    }
    let _ = app.decide_raw(DecideRequest { tool: String::new(), ..request("read") }).await;
}

impl TestApp {
    async fn decide_raw(&mut self, req: DecideRequest) -> Result<(), tonic::Status> {
        self.client.decide(req).await.map(|_| ())
    }
}

/// The seqs of every event, via the Query RPC, page by page.
async fn query_all(client: &mut AuditClient<Channel>, filter: Filter, page_size: u32) -> Vec<u64> {
    let mut seqs = Vec::new();
    let mut token = String::new();
    loop {
        let req = QueryRequest {
            filter: Some(filter.clone()),
            page_size,
            page_token: token,
            ..Default::default()
        };
        let page = client.query(req).await.unwrap().into_inner();
        seqs.extend(page.events.iter().map(|e| e.seq));
        if page.next_page_token.is_empty() {
            return seqs;
        }
        token = page.next_page_token;
    }
}

/// The same question asked of SQLite directly.
fn sql_seqs(db: &Path, condition: &str) -> Vec<u64> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt =
        conn.prepare(&format!("SELECT seq FROM events WHERE {condition} ORDER BY seq")).unwrap();
    stmt.query_map([], |r| r.get::<_, i64>(0)).unwrap().map(|s| s.unwrap() as u64).collect()
}

#[tokio::test]
async fn query_answers_every_filter_and_their_combination_as_sql_does() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let mut client = audit(&app);
    let decision_id =
        rows(&app.db).into_iter().find(|r| r.kind == "execution").unwrap().decision_id.unwrap();
    let middle_ts: String = rusqlite::Connection::open(&app.db)
        .unwrap()
        .query_row("SELECT ts FROM events WHERE seq = 6", [], |r| r.get(0))
        .unwrap();
    let cases = [
        (Filter { session_id: "s1".into(), ..Default::default() }, "session_id = 's1'".to_owned()),
        (Filter { actor_id: "bob".into(), ..Default::default() }, "actor_id = 'bob'".to_owned()),
        (Filter { tool: "read".into(), ..Default::default() }, "tool = 'read'".to_owned()),
        (
            Filter { action: "fs.read".into(), ..Default::default() },
            "action = 'fs.read'".to_owned(),
        ),
        (Filter { outcome: "deny".into(), ..Default::default() }, "outcome = 'deny'".to_owned()),
        (
            Filter { kind: "violation".into(), ..Default::default() },
            "kind = 'violation'".to_owned(),
        ),
        (
            Filter { decision_id: decision_id.clone(), ..Default::default() },
            format!("decision_id = '{decision_id}'"),
        ),
        (Filter { since: middle_ts.clone(), ..Default::default() }, format!("ts >= '{middle_ts}'")),
        (Filter { until: middle_ts.clone(), ..Default::default() }, format!("ts < '{middle_ts}'")),
        (
            Filter {
                session_id: "s2".into(),
                actor_id: "bob".into(),
                kind: "decision".into(),
                ..Default::default()
            },
            "session_id = 's2' AND actor_id = 'bob' AND kind = 'decision'".to_owned(),
        ),
    ];

    for (filter, condition) in cases {
        let expected = sql_seqs(&app.db, &condition);
        assert!(!expected.is_empty(), "{condition} selects nothing: a weak case");
        assert_eq!(query_all(&mut client, filter, 2).await, expected, "{condition}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_while_writes_continue_loses_and_repeats_nothing() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let mut writer = app.client.clone();
    let writing = tokio::spawn(async move {
        for _ in 0..300 {
            writer.decide(request("read")).await.unwrap();
        }
    });
    let mut client = audit(&app);

    let mut seen: Vec<u64> = Vec::new();
    loop {
        let writes_done = writing.is_finished();
        let token = seen.last().map(ToString::to_string).unwrap_or_default();
        let req =
            QueryRequest { filter: None, page_size: 7, page_token: token, ..Default::default() };
        let page = client.query(req).await.unwrap().into_inner();
        seen.extend(page.events.iter().map(|e| e.seq));
        // A short page after the writes ended: everything has been read.
        if writes_done && page.events.len() < 7 {
            break;
        }
    }
    writing.await.unwrap();

    let unique: BTreeSet<_> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "a seq was repeated");
    assert_eq!(seen, (1..=rows(&app.db).len() as u64).collect::<Vec<_>>(), "a seq was lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newest_first_pages_go_back_to_the_start_while_writes_continue() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let mut client = audit(&app);
    let first = QueryRequest { page_size: 5, newest_first: true, ..Default::default() };
    let first = client.query(first).await.unwrap().into_inner();
    let head = first.events[0].seq;
    assert_eq!(head, rows(&app.db).len() as u64, "the first page starts at the head");
    // Events appended now belong to a new first page, not to the pages that follow.
    for _ in 0..20 {
        app.decide(request("read")).await;
    }
    let mut seen: Vec<u64> = first.events.iter().map(|e| e.seq).collect();
    let mut token = first.next_page_token;
    while !token.is_empty() {
        let req = QueryRequest {
            page_size: 5,
            page_token: token,
            newest_first: true,
            ..Default::default()
        };
        let page = client.query(req).await.unwrap().into_inner();
        seen.extend(page.events.iter().map(|e| e.seq));
        token = page.next_page_token;
    }
    assert_eq!(seen, (1..=head).rev().collect::<Vec<_>>());

    // With a filter, the filter's events only, newest first.
    let denied = Filter { outcome: "deny".into(), ..Default::default() };
    let req = QueryRequest { filter: Some(denied), newest_first: true, ..Default::default() };
    let page = client.query(req).await.unwrap().into_inner();
    let mut expected = sql_seqs(&app.db, "outcome = 'deny'");
    expected.reverse();
    assert!(expected.len() > 1);
    assert_eq!(page.events.iter().map(|e| e.seq).collect::<Vec<_>>(), expected);
}

#[tokio::test]
async fn query_refuses_a_bad_filter_by_field_and_records_it() {
    let app = spawn_app().await;
    let mut client = audit(&app);

    let bad_time = QueryRequest {
        filter: Some(Filter { since: "last tuesday".into(), ..Default::default() }),
        ..Default::default()
    };
    let bad_kind = QueryRequest {
        filter: Some(Filter { kind: "decisions".into(), ..Default::default() }),
        ..Default::default()
    };
    let big_page = QueryRequest { page_size: 5000, ..Default::default() };
    let statuses = [
        client.query(bad_time).await.unwrap_err(),
        client.query(bad_kind).await.unwrap_err(),
        client.query(big_page).await.unwrap_err(),
    ];

    let prefixes = ["filter.since:", "filter.kind:", "page_size:"];
    for (status, prefix) in statuses.iter().zip(prefixes) {
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().starts_with(prefix), "{}", status.message());
    }
    let refused: Vec<_> =
        rows(&app.db).into_iter().filter(|r| r.kind == "invalid_request").collect();
    assert_eq!(refused.len(), 3);
    assert_eq!(refused[0].request.as_deref(), Some(r#"{"rpc":"toolgate.v1.Audit/Query"}"#));
}

#[tokio::test]
async fn head_verify_and_stats_describe_the_trail() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let mut client = audit(&app);
    let stored = rows(&app.db);

    let head = client.head(HeadRequest::default()).await.unwrap().into_inner();
    let verified = client.verify(VerifyRequest::default()).await.unwrap().into_inner();
    let range = client
        .verify(VerifyRequest { from_seq: 3, to_seq: 5, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let stats = client.stats(StatsRequest::default()).await.unwrap().into_inner();

    assert_eq!(head.seq, stored.len() as u64);
    assert!(verified.intact);
    assert_eq!((verified.checked, verified.last_hash), (head.seq, head.hash));
    assert!(range.intact);
    assert_eq!((range.checked, range.last_seq), (3, 5));
    assert_eq!(stats.total, head.seq);
    let count = |list: &[toolgate::proto::Count], key: &str| {
        list.iter().find(|c| c.key == key).map_or(0, |c| c.count)
    };
    assert_eq!(count(&stats.by_kind, "decision"), 6);
    assert_eq!(count(&stats.by_kind, "invalid_request"), 1);
    assert_eq!(count(&stats.by_outcome, "deny"), 3);
    // Alice's decisions, and the refusal of her malformed request.
    assert_eq!(count(&stats.by_actor, "alice"), 5);
}

#[tokio::test]
async fn verify_rpc_names_an_edit_made_behind_the_servers_back() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let conn = rusqlite::Connection::open(&app.db).unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_no_update; UPDATE events SET tool = 'read' WHERE seq = 4;",
    )
    .unwrap();

    let answer = audit(&app).verify(VerifyRequest::default()).await.unwrap().into_inner();

    assert!(!answer.intact);
    assert_eq!(answer.problems.len(), 1);
    assert_eq!((answer.problems[0].seq, answer.problems[0].kind.as_str()), (4, "hash_mismatch"));
}

/// Runs a command and returns its exit code and stdout.
async fn run(args: &[&str]) -> (i32, String) {
    let out = toolgate_async(args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("error:") || out.status.code() != Some(0), "{stderr}");
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

#[tokio::test]
async fn the_command_line_and_grpc_give_the_same_rows() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let db = app.db.to_str().unwrap().to_owned();

    let (_, from_db) = run(&["query", "--db", &db, "--session", "s1", "--json"]).await;
    let (_, from_server) = run(&["query", "--server", &app.url, "--session", "s1", "--json"]).await;
    let from_grpc =
        query_all(&mut audit(&app), Filter { session_id: "s1".into(), ..Default::default() }, 100)
            .await;

    assert_eq!(from_db, from_server);
    let seqs: Vec<u64> = from_db
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, from_grpc);
    let (code, table) = run(&["query", "--db", &db, "--kind", "violation"]).await;
    assert_eq!(code, 0);
    assert!(table.lines().next().unwrap().starts_with("seq  ts"), "{table}");
    assert!(table.contains("the decision was not allow: deny"), "{table}");
    // Each decision's policies have their column.
    let (_, table) = run(&["query", "--db", &db, "--session", "s1", "--kind", "decision"]).await;
    let header: Vec<_> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header[7..9], ["outcome", "policies"], "{table}");
    let decided = from_db.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let ids = decided
        .filter_map(|e| e["policy_ids"].as_str().map(str::to_owned))
        .map(|ids| serde_json::from_str::<Vec<String>>(&ids).unwrap().join(","))
        .find(|ids| !ids.is_empty())
        .expect("a decision with policies");
    assert!(table.contains(&format!(" {ids} ")), "{ids} in\n{table}");
}

/// A page cut by --limit says so on stderr and where the next one starts; following that
/// hint, oldest first or newest first, through the file or the server, reads every event once.
#[tokio::test]
async fn query_says_when_its_limit_cut_the_output_and_pages_on_from_there() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let db = app.db.to_str().unwrap().to_owned();
    let seqs = |json: &str| -> Vec<i64> {
        json.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"].as_i64().unwrap())
            .collect()
    };
    let (_, all) = run(&["query", "--db", &db, "--json"]).await;
    let all = seqs(&all);
    assert!(all.len() > 6, "{all:?}");
    for source in [["--db", db.as_str()], ["--server", app.url.as_str()]] {
        for newest_first in [false, true] {
            let mut read = Vec::new();
            let mut from: Option<String> = None;
            loop {
                let mut args = vec!["query", source[0], source[1], "--json", "--limit", "4"];
                if newest_first {
                    args.push("--newest-first");
                }
                if let Some(from) = &from {
                    args.extend(["--from", from.as_str()]);
                }
                let out = toolgate_async(&args).await;
                assert!(out.status.success());
                read.extend(seqs(&String::from_utf8(out.stdout).unwrap()));
                let said = String::from_utf8(out.stderr).unwrap();
                let Some(hint) = said.split("--from ").nth(1) else {
                    assert!(said.is_empty(), "{said}");
                    break;
                };
                assert!(said.contains("stopped at --limit 4"), "{said}");
                from = Some(hint.split_whitespace().next().unwrap().to_owned());
            }
            let mut expected = all.clone();
            if newest_first {
                expected.reverse();
            }
            assert_eq!(read, expected, "{source:?} newest first: {newest_first}");
        }
    }
}

const NASTY: [&str; 8] = [
    "=1+1",
    "@SUM(A1)",
    "-2",
    "\tleading tab",
    "\rleading cr",
    "say \"hi\", then go",
    "two\r\nlines",
    "日本語 🚀",
];

/// Decides one request per nasty text, carried in fields that reach the CSV.
async fn populate_nasty(app: &mut TestApp) {
    for text in NASTY {
        let mut req = with_options(request("read"), false, false);
        req.session_id = text.into();
        req.resource = Some(Resource {
            r#type: "file".into(),
            id: text.into(),
            classification: String::new(),
        });
        app.decide(req).await;
    }
}

#[tokio::test]
async fn export_guards_formulas_and_reads_back_through_a_strict_parser_and_verifies() {
    let mut app = spawn_app().await;
    populate_nasty(&mut app).await;
    let db = app.db.to_str().unwrap().to_owned();
    let csv_path = app.dir.path().join("trail.csv");
    let manifest_path = app.dir.path().join("trail.json");
    let csv = csv_path.to_str().unwrap();
    let manifest = manifest_path.to_str().unwrap();

    let out =
        toolgate_async(&["export", "--db", &db, "--output", csv, "--manifest", manifest, "--bom"])
            .await;
    let code = out.status.code().unwrap();
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(said.starts_with("exported 9 events (seq 1–9) to "), "a summary at the end: {said}");
    assert!(said.contains(", the manifest to "), "{said}");
    let bytes = std::fs::read(&csv_path).unwrap();
    let (verified, out) = run(&["verify", "--csv", csv, "--manifest", manifest, "--db", &db]).await;

    assert_eq!(code, 0);
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"));
    let mut reader = csv::ReaderBuilder::new().from_reader(&bytes[3..]);
    let sessions: Vec<String> =
        reader.records().map(|r| r.unwrap()[5].to_owned()).filter(|s| !s.is_empty()).collect();
    for (cell, text) in sessions.iter().zip(NASTY) {
        let risky = matches!(text.as_bytes()[0], b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r');
        let expected = if risky { format!("'{text}") } else { text.to_owned() };
        assert_eq!(cell, &expected);
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    assert_eq!(manifest["csv_sha256"], hex::encode(Sha256::digest(&bytes)));
    assert_eq!(manifest["rows"], rows(&app.db).len());
    assert_eq!(verified, 0, "{out}");
}

/// The review's attack on a spreadsheet whose list separator is `;`: the cell is quoted for
/// a reader of `,`, but a reader of `;` starts a field after the `;` inside it. No field of
/// the export, read either way, begins with a formula, and it still verifies.
#[tokio::test]
async fn an_export_read_with_semicolons_yields_no_formula_and_verifies() {
    let mut app = spawn_app().await;
    for text in ["x;=cmd|' /C calc'!A0", "y;\"=1", "z,@SUM(A1)", "w\r\n+1"] {
        let mut req = with_options(request("read"), false, false);
        req.session_id = text.into();
        app.decide(req).await;
    }
    let db = app.db.to_str().unwrap().to_owned();
    let csv_path = app.dir.path().join("trail.csv");
    let manifest_path = app.dir.path().join("trail.json");
    let (csv, manifest) = (csv_path.to_str().unwrap(), manifest_path.to_str().unwrap());
    let out =
        toolgate_async(&["export", "--db", &db, "--output", csv, "--manifest", manifest]).await;
    assert_eq!(out.status.code(), Some(0));

    let bytes = std::fs::read(&csv_path).unwrap();
    for separator in [b';', b','] {
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(separator)
            .flexible(true)
            .has_headers(false)
            .from_reader(&bytes[..]);
        for row in reader.records() {
            for field in row.unwrap().iter() {
                let start = field.trim_start_matches('"');
                assert!(
                    !start.starts_with(['=', '+', '-', '@', '\t', '\r']),
                    "a field read with `{}` begins with a formula: {field:?}",
                    separator as char
                );
            }
        }
    }
    let (verified, out) = run(&["verify", "--csv", csv, "--manifest", manifest, "--db", &db]).await;
    assert_eq!(verified, 0, "{out}");
}

/// A populated trail exported whole: the app, the CSV's path, and its lines (CR LF ends; the
/// populated trail's cells have no line breaks).
async fn exported_lines() -> (TestApp, std::path::PathBuf, Vec<String>) {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let db = app.db.to_str().unwrap().to_owned();
    let csv_path = app.dir.path().join("trail.csv");
    run(&["export", "--db", &db, "--output", csv_path.to_str().unwrap()]).await;
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let lines = text.split_terminator("\r\n").map(str::to_owned).collect();
    (app, csv_path, lines)
}

#[tokio::test]
async fn verify_csv_names_an_edited_cell_a_deleted_row_and_swapped_rows() {
    let (_app, csv_path, mut lines) = exported_lines().await;
    let csv = csv_path.to_str().unwrap().to_owned();
    // lines[0] is the header; lines[n] is seq n.
    assert!(lines[4].contains(",deny,"), "seq 4 is the denied write");
    lines[4] = lines[4].replacen(",deny,", ",allow,", 1);
    lines.swap(8, 9);
    lines.remove(5);
    std::fs::write(&csv_path, lines.join("\r\n") + "\r\n").unwrap();

    let (code, out) = run(&["verify", "--csv", &csv]).await;

    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BROKEN seq 4: hash mismatch"), "{out}");
    assert!(out.contains("BROKEN seq 5: missing"), "{out}");
    assert!(out.contains("BROKEN seq 8: out of order (expected seq 10)"), "{out}");
    // The walk goes on from row 9, the furthest read: nothing after the swap is reported for
    // its sake, and a displaced row's link is not a finding of its own.
    assert!(!out.contains("BROKEN seq 10") && !out.contains("broken link"), "{out}");
    assert!(out.contains("broken: 4 problem(s)"), "{out}");
}

#[tokio::test]
async fn a_filtered_export_verifies_row_by_row_and_against_the_trail() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let db = app.db.to_str().unwrap().to_owned();
    let csv_path = app.dir.path().join("s1.csv");
    let manifest_path = app.dir.path().join("s1.json");
    let (csv, manifest) =
        (csv_path.to_str().unwrap().to_owned(), manifest_path.to_str().unwrap().to_owned());

    run(&[
        "export",
        "--server",
        &app.url,
        "--session",
        "s1",
        "--output",
        &csv,
        "--manifest",
        &manifest,
    ])
    .await;
    let (intact, out) = run(&["verify", "--csv", &csv, "--manifest", &manifest, "--db", &db]).await;
    // Without --filtered or the manifest, the gaps are problems, and the output says why.
    let (unsaid, unsaid_out) = run(&["verify", "--csv", &csv]).await;
    assert_eq!(unsaid, 1, "{unsaid_out}");
    assert!(unsaid_out.contains(": missing"), "{unsaid_out}");
    assert!(
        unsaid_out.contains("verify it with --filtered, or with its --manifest"),
        "{unsaid_out}"
    );
    let text = std::fs::read_to_string(&csv_path).unwrap();
    std::fs::write(&csv_path, text.replacen(",alice,", ",mallory,", 1)).unwrap();
    let (edited, edited_out) = run(&["verify", "--csv", &csv, "--filtered", "--db", &db]).await;

    assert_eq!(intact, 0, "{out}");
    assert_eq!(edited, 1, "{edited_out}");
    assert!(edited_out.contains("hash mismatch"), "{edited_out}");
    assert!(edited_out.contains("differs from the trail"), "{edited_out}");
}

/// `export --proofs` needs the trail's file: through a server it is refused, not left unwritten
/// with a manifest that names it. And without --db or --server the commands ask the default
/// server, `$TOOLGATE_SERVER`, in the `host:port` form `serve --listen` prints.
#[tokio::test]
async fn proofs_need_the_file_and_the_default_server_is_asked() {
    let mut app = spawn_app().await;
    populate(&mut app).await;
    let dir = app.dir.path();
    let (csv, manifest, proofs) = (dir.join("e.csv"), dir.join("e.json"), dir.join("e.proofs"));
    let out = toolgate_async(&[
        "export",
        "--server",
        &app.url,
        "-o",
        csv.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        "--proofs",
        proofs.to_str().unwrap(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--proofs needs --db"));
    assert!(!manifest.exists() && !proofs.exists());

    let address = app.url.trim_start_matches("http://").to_owned();
    // Off the runtime the server under test runs on.
    let asked = tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("toolgate")
            .unwrap()
            .args(["query", "--json", "--session", "s1"])
            .env("TOOLGATE_SERVER", &address)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(asked.status.success(), "{}", String::from_utf8_lossy(&asked.stderr));
    let (_, from_db) =
        run(&["query", "--db", app.db.to_str().unwrap(), "--json", "--session", "s1"]).await;
    assert_eq!(String::from_utf8(asked.stdout).unwrap(), from_db);
}

#[tokio::test]
async fn the_grpc_export_streams_the_same_file_as_the_command_line() {
    let mut app = spawn_app().await;
    populate_nasty(&mut app).await;
    let db = app.db.to_str().unwrap().to_owned();

    let mut stream = audit(&app)
        .export_csv(ExportRequest { filter: None, bom: false })
        .await
        .unwrap()
        .into_inner();
    let mut streamed = Vec::new();
    let mut summary = None;
    while let Some(chunk) = stream.message().await.unwrap() {
        streamed.extend_from_slice(&chunk.data);
        summary = chunk.summary.or(summary);
    }
    let (_, from_cli) = run(&["export", "--db", &db]).await;

    assert_eq!(String::from_utf8(streamed.clone()).unwrap(), from_cli);
    let summary = summary.unwrap();
    assert_eq!(summary.csv_sha256, hex::encode(Sha256::digest(&streamed)));
    assert_eq!((summary.first_seq, summary.rows), (1, rows(&app.db).len() as u64));
}

#[tokio::test]
async fn stats_from_the_command_line_counts_what_grpc_counts() {
    let mut app = spawn_app().await;
    populate(&mut app).await;

    let (code, out) = run(&["stats", "--server", &app.url, "--since", "1h", "--json"]).await;

    assert_eq!(code, 0);
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats["total"], rows(&app.db).len());
    assert_eq!(stats["by_outcome"]["deny"], 3);
    // The table says what it counts: events, of which decisions, and the outcomes are theirs.
    let db = app.db.to_str().unwrap().to_owned();
    let (_, table) = run(&["stats", "--db", &db]).await;
    let decisions = rows(&app.db).iter().filter(|r| r.kind == "decision").count();
    let head = format!("events: {} (decisions: {decisions}, executions: ", rows(&app.db).len());
    assert!(table.starts_with(&head), "{table}");
    assert!(table.contains("\nby outcome (decisions):\n"), "{table}");
    assert!(table.contains("\nby tool (events):\n"), "{table}");
}

#[tokio::test]
async fn a_refused_cell_is_named_by_its_physical_line_and_exits_1() {
    let (_app, csv_path, mut lines) = exported_lines().await;
    let csv = csv_path.to_str().unwrap().to_owned();
    // Physical line 4 (after the header) is seq 3.
    lines[3] = lines[3].replacen("3,", "+3,", 1);
    std::fs::write(&csv_path, lines.join("\r\n") + "\r\n").unwrap();
    let (code, out) = run(&["verify", "--csv", &csv]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BROKEN line 4: unreadable: seq: `+3`"), "{out}");
    // The same file with LF line ends names the same line.
    std::fs::write(&csv_path, lines.join("\n") + "\n").unwrap();
    let (_, out) = run(&["verify", "--csv", &csv]).await;
    assert!(out.contains("BROKEN line 4: unreadable"), "{out}");
}

/// `toolgate query … | head -1`: a command whose reader has gone ends quietly, with success,
/// instead of panicking on the closed pipe. The pipe's read end is closed before the command
/// starts, so its first line already meets it.
#[tokio::test]
async fn a_command_whose_reader_went_away_ends_quietly() {
    let app = crate::helpers::spawn_app().await;
    app.client.clone().decide(crate::helpers::request("read")).await.unwrap();
    let db = app.db.to_str().unwrap().to_owned();
    let commands = [
        &["query", "--db", &db][..],
        &["hash-args", r#"{"a":1}"#],
        &["export", "--db", &db],
        &["export", "--db", &db, "--format", "jsonl"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolgate"))
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// An error is said once, in words: each cause once, and a server's refusal without gRPC's
/// stock text of its code.
#[tokio::test]
async fn the_command_line_says_an_error_once() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, "not a database, at some length so that SQLite reads a header").unwrap();
    let out = toolgate_async(&["query", "--db", junk.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: the trail's database: file is not a database\n"
    );

    let app = crate::helpers::spawn_app_with(|c| {
        c.auth.tokens.push(crate::helpers::token("agent", "s3cret", r#"["agent"]"#, &["alice"]));
    })
    .await;
    let out = toolgate_async(&["query", "--server", &app.url]).await;
    let said = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.starts_with("error: the server refused: "), "{said}");
    assert!(said.contains("set TOOLGATE_TOKEN"), "{said}");
    assert!(!said.contains("The request does not have valid authentication"), "{said}");
}
