//! The console over HTTP against the real server: its headers and escaping, sign-in and the
//! refusals it records, CSRF and origin checks, a verdict that the agent's Await hears, the
//! overview's followers, a CSV download with its manifest that `toolgate verify` accepts, and
//! a verification that finds a tampered event. (tests/console drives the same pages in a real
//! browser.)

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, LOCATION, SET_COOKIE};
use toolgate::config::AuthConfig;
use toolgate::config::Config;
use toolgate::proto::approvals_client::ApprovalsClient;
use toolgate::proto::gate_client::GateClient;
use toolgate::proto::{Actor, ApprovalState, AwaitRequest, DecideRequest, Outcome};

use crate::approvals::deploys_need_approval;
use crate::helpers::{
    TestApp, eventually, request, rows, spawn_app_with_side_port, start_with_side_port, token,
    toolgate, toolgate_async,
};

const AGENT: &str = "agent-secret-1f2e";
const APPROVER: &str = "approver-secret-3d4c";
const AUDITOR: &str = "auditor-secret-5b6a";

/// A browser, as far as these tests need one: a cookie jar of one cookie, no redirects
/// followed, and this console's own origin on its forms.
pub struct Browser {
    base: String,
    client: reqwest::Client,
    cookie: Option<String>,
}

/// An answer: its status, headers and body.
pub struct Page {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Browser {
    pub fn new(base: &str) -> Self {
        let client =
            reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Self { base: base.to_owned(), client, cookie: None }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let request = match &self.cookie {
            Some(cookie) => request.header("cookie", cookie),
            None => request,
        };
        let answer = request.send().await.unwrap();
        let headers = answer.headers().clone();
        if let Some(set) = headers.get(SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            self.cookie = (!pair.ends_with('=')).then_some(pair);
        }
        Page { status: answer.status(), headers, body: answer.text().await.unwrap() }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("origin", self.base.clone())
            .form(form);
        self.send(request).await
    }
}

/// The CSRF token of the first form on `page`.
fn csrf(page: &Page) -> String {
    let at = page.body.find("name=\"csrf\" value=\"").expect("a form with a CSRF token");
    page.body[at + 19..].split('"').next().unwrap().to_owned()
}

/// The console on, and deploys waiting for a person's approval (everything else allowed).
fn console(config: &mut Config) {
    config.console.enabled = true;
    deploys_need_approval(config);
}

fn with_auth(config: &mut Config) {
    console(config);
    config.auth = AuthConfig {
        tokens: vec![
            token("agents", AGENT, r#"["agent"]"#, &["alice", "mallory"]),
            token("bob", APPROVER, r#"["approver", "auditor"]"#, &["bob"]),
            token("audit", AUDITOR, r#"["auditor"]"#, &[]),
        ],
        ..AuthConfig::default()
    };
}

/// A Decide with the agents' token.
fn as_agent<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert("authorization", format!("Bearer {AGENT}").parse().unwrap());
    request
}

/// Calls whose names are hostile: markup, a script URL, a bidirectional override, a very long
/// name.
async fn hostile_calls(app: &mut TestApp, authorized: bool) -> Vec<String> {
    let mut decisions = Vec::new();
    let calls = [
        ("<script>alert('actor')</script>", "read", "s-1"),
        ("mallory", "\"><img src=x onerror=alert('tool')>", "javascript:alert('session')"),
        ("mallory", "invoice\u{202e}fdp.exe", "s-2"),
        ("mallory", &"x".repeat(200), "s-3"),
    ];
    for (actor, tool, session) in calls {
        let decide = DecideRequest {
            session_id: session.into(),
            actor: Some(Actor { id: actor.into(), ..Default::default() }),
            tool: tool.into(),
            ..request("read")
        };
        let decided = match authorized {
            true => {
                let mut decide = decide;
                decide.actor = Some(Actor { id: "mallory".into(), ..Default::default() });
                app.client.decide(as_agent(decide)).await
            }
            false => app.client.decide(decide).await,
        };
        decisions.push(decided.unwrap().into_inner().decision_id);
    }
    decisions
}

fn assert_safe(page: &Page) {
    let csp = page.headers.get("content-security-policy").unwrap().to_str().unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(page.headers.get("x-content-type-options").unwrap(), "nosniff");
    assert!(page.headers.get("server-timing").is_some());
    for raw in ["<script>alert", "<img src=x", "href=\"javascript:", "\u{202e}"] {
        assert!(!page.body.contains(raw), "`{raw}` reached the page unescaped");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_shows_hostile_strings_as_text_under_a_strict_policy() {
    let (mut app, side) = spawn_app_with_side_port(console).await;
    let decisions = hostile_calls(&mut app, false).await;
    let mut browser = Browser::new(&side);

    let trail = browser.get("/ui/trail").await;
    assert_eq!(trail.status, StatusCode::OK);
    let cookie = trail.headers.get(SET_COOKIE).unwrap().to_str().unwrap();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains("Secure"), "no TLS on this side port: {cookie}");
    assert_safe(&trail);
    assert!(trail.body.contains("&lt;script&gt;alert('actor')&lt;/script&gt;"));
    assert!(trail.body.contains("&quot;&gt;&lt;img src=x onerror=alert('tool')&gt;"));
    assert!(trail.body.contains("invoice<span class=\"mark\">U+202E</span>fdp.exe"));
    assert!(trail.body.contains("(200 characters)"), "a long name is clipped in the table");

    let story = format!("/ui/story?decision={}", decisions[1]);
    for path in ["/ui", "/ui?window=day", &story, "/ui/event?seq=1", "/ui/approvals", "/ui/export"]
    {
        let page = browser.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.body);
        assert_safe(&page);
    }
    let story = browser.get(&story).await;
    assert!(story.body.contains("javascript:alert('session')"), "the session, as text");
    assert!(story.body.contains("href=\"/ui/trail?session=javascript%3Aalert"), "{}", story.body);

    // Files only from this server: the stylesheet and script the pages name are served.
    let script = story.body.split("script src=\"").nth(1).unwrap().split('"').next().unwrap();
    let script = browser.get(script).await;
    assert_eq!(script.status, StatusCode::OK);
    assert!(script.headers["content-type"].to_str().unwrap().starts_with("text/javascript"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_auth_the_console_answers_only_to_loopback_names() {
    let (_app, side) = spawn_app_with_side_port(console).await;
    let client = reqwest::Client::new();
    let rebound = client.get(format!("{side}/ui")).header("host", "evil.example:80");
    let answer = rebound.send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::FORBIDDEN);
    let local = client.get(format!("{side}/ui/trail")).header("host", "localhost:1234");
    assert_eq!(local.send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_needs_the_sessions_csrf_token_and_its_own_origin() {
    let (mut app, side) = spawn_app_with_side_port(console).await;
    let decision = app.decide(request("deploy")).await;
    assert_eq!(decision.outcome(), Outcome::RequireApproval);
    let mut browser = Browser::new(&side);
    let page = browser.get("/ui/approvals").await;
    assert!(page.body.contains(&decision.decision_id));
    let token = csrf(&page);
    let id = decision.decision_id.as_str();

    let forged = browser
        .post(
            "/ui/approvals",
            &[("decision", id), ("verdict", "approve"), ("approver", "bob"), ("csrf", "0000")],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let mut stranger = Browser::new(&side);
    let cookieless = stranger
        .post(
            "/ui/approvals",
            &[("decision", &decision.decision_id), ("verdict", "approve"), ("csrf", &token)],
        )
        .await;
    assert_eq!(cookieless.status, StatusCode::FORBIDDEN, "no session, no verdict");
    let cross_site = browser
        .send(
            browser
                .client
                .post(format!("{side}/ui/approvals"))
                .header("origin", "http://evil.example")
                .form(&[
                    ("decision", decision.decision_id.as_str()),
                    ("verdict", "approve"),
                    ("approver", "bob"),
                    ("csrf", token.as_str()),
                ]),
        )
        .await;
    assert_eq!(cross_site.status, StatusCode::FORBIDDEN);
    assert!(
        rows(&app.db).iter().all(|r| r.kind != "approval_approved"),
        "no refused form gave a verdict"
    );

    let approved = browser
        .post(
            "/ui/approvals",
            &[
                ("decision", &decision.decision_id),
                ("verdict", "approve"),
                ("approver", "bob"),
                ("comment", "ship it"),
                ("csrf", &token),
            ],
        )
        .await;
    assert_eq!(approved.status, StatusCode::OK, "{}", approved.body);
    assert!(approved.body.contains("Approved: the call of alice to deploy."), "{}", approved.body);
    let verdict = rows(&app.db).into_iter().find(|r| r.kind == "approval_approved").unwrap();
    assert_eq!(
        (verdict.actor_id.as_deref(), verdict.reason.as_deref()),
        (Some("bob"), Some("ship it"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_takes_a_token_with_a_role_and_every_refusal_is_recorded() {
    let (app, side) = spawn_app_with_side_port(with_auth).await;
    let mut browser = Browser::new(&side);
    let first = browser.get("/ui/trail?tool=read").await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);
    assert_eq!(first.headers[LOCATION], "/ui/sign-in?next=%2Fui%2Ftrail%3Ftool%3Dread");
    let form = browser.get("/ui/sign-in").await;
    assert_eq!(form.status, StatusCode::OK);

    for wrong in ["not-a-token", AGENT] {
        let refused = browser.post("/ui/sign-in", &[("token", wrong), ("next", "/ui")]).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert!(refused.body.contains("not signed in"), "{}", refused.body);
        assert!(browser.cookie.is_none());
    }
    let denied: Vec<_> = rows(&app.db).into_iter().filter(|r| r.kind == "access_denied").collect();
    assert_eq!(denied.len(), 2, "{denied:?}");
    assert!(denied.iter().all(|r| r.request.as_deref() == Some(r#"{"rpc":"/ui/sign-in"}"#)));
    assert_eq!(denied[0].actor_id.as_deref(), Some("anonymous"));
    assert_eq!(denied[1].actor_id.as_deref(), Some("agents"));

    let signed =
        browser.post("/ui/sign-in", &[("token", AUDITOR), ("next", "/ui/trail?tool=read")]).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER);
    assert_eq!(signed.headers[LOCATION], "/ui/trail?tool=read");
    assert!(browser.cookie.is_some());
    let trail = browser.get("/ui/trail").await;
    assert_eq!(trail.status, StatusCode::OK);
    assert!(trail.body.contains("Signed in as <strong>audit</strong>"));
    assert!(
        !trail.body.contains("href=\"/ui/approvals\""),
        "an auditor is not shown the approvals"
    );

    // An auditor who asks for the approvals anyway sees what waits, and cannot judge it.
    let approvals = browser.get("/ui/approvals").await;
    assert_eq!(approvals.status, StatusCode::OK);
    assert!(!approvals.body.contains("action=\"/ui/approvals\""), "no verdict form for an auditor");

    let out = browser.post("/ui/sign-out", &[("csrf", &csrf(&trail))]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(browser.cookie.is_none());
    assert_eq!(browser.get("/ui").await.status, StatusCode::SEE_OTHER, "signed out");
}

/// One person signing in without end keeps at most their own few sessions, and never ends
/// another person's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auditor_signing_in_ten_thousand_times_never_ends_an_approvers_session() {
    let (_app, side) = spawn_app_with_side_port(with_auth).await;
    let mut approver = Browser::new(&side);
    let signed = approver.post("/ui/sign-in", &[("token", APPROVER), ("next", "/ui")]).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER);

    let mut first = Browser::new(&side);
    first.post("/ui/sign-in", &[("token", AUDITOR), ("next", "/ui")]).await;
    let mut flood = tokio::task::JoinSet::new();
    for worker in 0..8 {
        let side = side.clone();
        flood.spawn(async move {
            // A new browser each time, as far as the console can tell: no cookie.
            let mut last = Browser::new(&side);
            for _ in 0..(10_050 / 8 + worker % 2) {
                last.cookie = None;
                let signed = last.post("/ui/sign-in", &[("token", AUDITOR), ("next", "/ui")]).await;
                assert_eq!(signed.status, StatusCode::SEE_OTHER);
            }
            last
        });
    }
    let mut last = None;
    while let Some(browser) = flood.join_next().await {
        last = Some(browser.unwrap());
    }

    let page = approver.get("/ui/approvals").await;
    assert_eq!(page.status, StatusCode::OK, "the approver is still signed in");
    assert!(page.body.contains("Signed in as <strong>bob</strong>"), "{}", page.body);
    assert_eq!(last.unwrap().get("/ui").await.status, StatusCode::OK, "the newest sign-in works");
    assert_eq!(first.get("/ui").await.status, StatusCode::SEE_OTHER, "the auditor's oldest ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_reaches_the_agents_await_and_a_rejection_is_given_alike() {
    let (app, side) = spawn_app_with_side_port(with_auth).await;
    let mut gate = GateClient::new(app.channel.clone());
    let deploy = |actor: &str| DecideRequest {
        actor: Some(Actor { id: actor.into(), ..Default::default() }),
        ..request("deploy")
    };
    let decision = gate.decide(as_agent(deploy("alice"))).await.unwrap().into_inner();
    let mut approvals = ApprovalsClient::new(app.channel.clone());
    let waiting = tokio::spawn({
        let decision_id = decision.decision_id.clone();
        async move {
            let ask = AwaitRequest { decision_id, timeout_ms: 30_000 };
            approvals.r#await(as_agent(ask)).await.unwrap().into_inner()
        }
    });

    let mut browser = Browser::new(&side);
    browser.post("/ui/sign-in", &[("token", APPROVER)]).await;
    let page = browser.get("/ui/approvals").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("as <strong>bob</strong>"), "the token acts as bob alone");
    let judged = browser
        .post(
            "/ui/approvals",
            &[
                ("decision", &decision.decision_id),
                ("verdict", "approve"),
                ("comment", "go"),
                ("csrf", &csrf(&page)),
            ],
        )
        .await;
    assert!(judged.body.contains("Approved: the call of alice to deploy."), "{}", judged.body);
    let heard = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap();
    assert_eq!(heard.state(), ApprovalState::Approved);
    assert_eq!((heard.approver.as_str(), heard.comment.as_str()), ("bob", "go"));

    // A rejection, the same way; the agent's call may then not run.
    let other = gate.decide(as_agent(deploy("mallory"))).await.unwrap().into_inner();
    let page = browser.get("/ui/approvals").await;
    let rejected = browser
        .post(
            "/ui/approvals",
            &[
                ("decision", &other.decision_id),
                ("verdict", "reject"),
                ("comment", ""),
                ("csrf", &csrf(&page)),
            ],
        )
        .await;
    assert!(
        rejected.body.contains("Rejected: the call of mallory to deploy."),
        "{}",
        rejected.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_may_not_judge_a_call_made_as_themselves() {
    let (app, side) = spawn_app_with_side_port(|config| {
        with_auth(config);
        config.auth.tokens.push(token("alice", "alice-secret-7c8d", r#"["approver"]"#, &["alice"]));
    })
    .await;
    let mut gate = GateClient::new(app.channel.clone());
    let decision = gate.decide(as_agent(request("deploy"))).await.unwrap().into_inner();
    let mut browser = Browser::new(&side);
    let signed = browser.post("/ui/sign-in", &[("token", "alice-secret-7c8d")]).await;
    assert_eq!(signed.headers[LOCATION], "/ui/approvals", "an approver alone starts there");
    let page = browser.get("/ui/approvals").await;
    let refused = browser
        .post(
            "/ui/approvals",
            &[("decision", &decision.decision_id), ("verdict", "approve"), ("csrf", &csrf(&page))],
        )
        .await;
    assert!(
        refused.body.contains("Not done: `alice` cannot approve their own call"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains(&decision.decision_id), "still pending");
}

/// Polls `path` until its body contains every one of `wanted` (the followers work in the
/// background), for up to 15 s.
async fn showing(browser: &mut Browser, path: &str, wanted: &[&str]) -> Page {
    let shows = async || {
        let page = browser.get(path).await;
        if wanted.iter().all(|w| page.body.contains(w)) { Ok(page) } else { Err(page) }
    };
    let (limit, every) = (Duration::from_secs(15), Duration::from_millis(200));
    eventually(limit, every, shows)
        .await
        .unwrap_or_else(|page| panic!("{path} never showed {wanted:?}: {}", page.body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_counts_the_trails_activity_and_follows_its_chain() {
    // The default policy: writes and bash need their flags.
    let (mut app, side) = spawn_app_with_side_port(|c| c.console.enabled = true).await;
    for tool in ["read", "read", "write", "write", "write", "bash"] {
        app.decide(request(tool)).await;
    }
    let head = rows(&app.db).len();
    let mut browser = Browser::new(&side);
    let overview = showing(
        &mut browser,
        "/ui",
        &[
            &format!("verified through seq <strong>{head}</strong>"),
            ">write</a> <span class=\"muted\">(3)</span>",
        ],
    )
    .await;
    assert!(
        overview
            .body
            .contains("href=\"/ui/trail?kind=decision&amp;outcome=deny&amp;since=1h\">4</a>"),
        "{}",
        overview.body
    );
    assert!(overview.body.contains("<title>"), "the chart's bars say their counts");
    assert!(overview.body.contains("✓ Intact"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csv_download_and_its_manifest_verify_against_the_trail() {
    let (mut app, side) = spawn_app_with_side_port(console).await;
    hostile_calls(&mut app, false).await;
    let mut browser = Browser::new(&side);
    let early = browser.get("/ui/export/manifest?download=d1").await;
    assert_eq!(early.status, StatusCode::NOT_FOUND, "no manifest before its download");
    let csv = browser.get("/ui/export/csv?actor=mallory&download=d1").await;
    assert_eq!(csv.status, StatusCode::OK);
    assert!(csv.headers["content-disposition"].to_str().unwrap().starts_with("attachment"));
    let manifest = browser.get("/ui/export/manifest?download=d1").await;
    assert_eq!(manifest.status, StatusCode::OK, "{}", manifest.body);
    let json: serde_json::Value = serde_json::from_str(&manifest.body).unwrap();
    assert_eq!(json["rows"], 3);
    assert_eq!(json["filter"]["actor_id"], "mallory");

    let dir = tempfile::tempdir().unwrap();
    let (csv_path, manifest_path) = (dir.path().join("e.csv"), dir.path().join("e.json"));
    std::fs::write(&csv_path, &csv.body).unwrap();
    std::fs::write(&manifest_path, &manifest.body).unwrap();
    let db = app.db.to_str().unwrap().to_owned();
    let (csv_arg, manifest_arg) = (csv_path.to_str().unwrap(), manifest_path.to_str().unwrap());
    let out =
        toolgate_async(&["verify", "--csv", csv_arg, "--manifest", manifest_arg, "--db", &db])
            .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));

    // A filter the server refuses is refused by field, and recorded like any other.
    let bad = browser.get("/ui/export/csv?since=yesterday&download=d2").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("filter.since"), "{}", bad.body);
    assert!(rows(&app.db).iter().any(|r| r.kind == "invalid_request"
        && r.error.as_deref().is_some_and(|e| e.starts_with("filter.since"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_an_event_changed_behind_the_trails_back() {
    let (mut app, side) = spawn_app_with_side_port(console).await;
    for _ in 0..5 {
        app.decide(request("read")).await;
    }
    let mut browser = Browser::new(&side);
    let intact = browser.get("/ui/verify?from=1&to=").await;
    assert!(intact.body.contains("✓ Intact"), "{}", intact.body);

    let conn = rusqlite::Connection::open(&app.db).unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_no_update; UPDATE events SET reason = 'nothing to see' WHERE seq = 3;",
    )
    .unwrap();
    let broken = browser.get("/ui/verify").await;
    assert!(broken.body.contains("✗ Broken"), "{}", broken.body);
    assert!(broken.body.contains("hash_mismatch"), "{}", broken.body);
    // Its page does not call it included: its hash is recomputed from what it now says.
    let event = browser.get("/ui/event?seq=3").await;
    assert!(event.body.contains("nothing to see"));
    assert!(event.body.contains("the event was altered"), "{}", event.body);
    assert!(browser.get("/ui/event?seq=4").await.body.contains("✓ "), "its neighbour stands");
    let bad = browser.get("/ui/verify?from=x").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn without_auth_the_console_is_refused_beyond_loopback_even_when_insisted_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("console.toml");
    std::fs::write(&config, "[console]\nenabled = true\n").unwrap();
    let refused = toolgate_async(&[
        "serve",
        "--config",
        config.to_str().unwrap(),
        "--http-listen",
        "0.0.0.0:0",
        "--insecure-allow-remote",
        "--db",
        "/nonexistent/x.db",
    ])
    .await;
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(
        stderr.contains("refusing to listen on `0.0.0.0:0` (the console's side port)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_notices_a_trail_cut_short_behind_its_back() {
    let (mut app, side) = spawn_app_with_side_port(console).await;
    for _ in 0..4 {
        app.decide(request("read")).await;
    }
    let head = rows(&app.db).len();
    let mut browser = Browser::new(&side);
    showing(&mut browser, "/ui", &[&format!("verified through seq <strong>{head}</strong>")]).await;
    let conn = rusqlite::Connection::open(&app.db).unwrap();
    conn.execute_batch(&format!(
        "DROP TRIGGER events_no_delete; DELETE FROM events WHERE seq = {head};"
    ))
    .unwrap();
    let broken = showing(&mut browser, "/ui", &["✗ Broken", "it was cut short"]).await;
    assert!(broken.body.contains(&format!("seq {head}: the trail ends before this event")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_signed_before_a_key_rotation_do_not_break_the_overview() {
    let keys = tempfile::tempdir().unwrap();
    let key = |name: &str| {
        let path = keys.path().join(name);
        let out = toolgate(&["keygen", "--name", "toolgate/test", "--out", path.to_str().unwrap()]);
        assert!(out.status.success());
        path
    };
    let (old, new) = (key("old.key"), key("new.key"));
    let (mut app, _) = spawn_app_with_side_port(|c| {
        c.checkpoints.key_file = Some(old);
        c.checkpoints.every_events = 3;
    })
    .await;
    for _ in 0..7 {
        app.decide(request("read")).await;
    }
    let (dir, db) = app.stop().await;

    let mut config = Config { db, ..Config::default() };
    config.console.enabled = true;
    config.checkpoints.key_file = Some(new);
    config.checkpoints.every_ms = 200;
    let (_app, side) = start_with_side_port(config, dir).await;
    let mut browser = Browser::new(&side);
    // The old key's checkpoints are on the trail; the latest is the new key's.
    let overview = showing(&mut browser, "/ui", &["✓ Intact", "✓ verified"]).await;
    assert!(!overview.body.contains("Broken"), "{}", overview.body);
}
