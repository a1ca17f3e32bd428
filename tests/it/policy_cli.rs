//! The policy authors' commands: `policy check`, `policy test` (on the shipped examples too)
//! and `decide`, offline and against a server.

use std::path::Path;

use crate::helpers::{rows, spawn_app, toolgate, toolgate_async};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn policy_check_passes_a_valid_file_and_names_an_invalid_one() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.cedar");
    std::fs::write(&broken, "@outcome(\"sometimes\") forbid (principal, action, resource);")
        .unwrap();

    let good = toolgate(&["policy", "check", "src/policy/default.cedar"]);
    let bad = toolgate(&["policy", "check", "src/policy/default.cedar", broken.to_str().unwrap()]);

    assert_eq!(good.status.code(), Some(0), "{}", stdout(&good));
    assert!(stdout(&good).starts_with("ok src/policy/default.cedar: 6 policies"));
    assert_eq!(bad.status.code(), Some(1));
    assert!(stdout(&bad).contains("FAILED"), "{}", stdout(&bad));
    assert!(stdout(&bad).contains("`@outcome` must be"), "{}", stdout(&bad));
}

/// A syntax error and a misspelt attribute, each on line 3, are shown as Cedar's own tools
/// show theirs: file, line and column, the line with a caret, the message and what was
/// expected; never a debug dump of the parser's error.
#[test]
fn a_broken_policy_is_shown_at_its_line_and_column_with_a_caret() {
    let dir = tempfile::tempdir().unwrap();
    let syntax = dir.path().join("syntax.cedar");
    std::fs::write(
        &syntax,
        "@id(\"a\")\npermit(principal, action, resource)\nwhen { context.tool.name == \"x\" ;\n",
    )
    .unwrap();
    let typo = dir.path().join("typo.cedar");
    std::fs::write(
        &typo,
        "@id(\"b\")\nforbid(principal, action, resource)\nwhen { context.toool.name == \"x\" };\n",
    )
    .unwrap();

    for (file, column, caret, said) in [
        (&syntax, 33, "^ expected", "unexpected token `;`"),
        (&typo, 8, "^^^^^^^^^^^^^", "toolgate provides no `context.toool`"),
    ] {
        let out = toolgate(&["policy", "check", file.to_str().unwrap()]);
        let shown = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{shown}");
        assert!(shown.contains(said), "{shown}");
        assert!(shown.contains(&format!("--> {}:3:{column}", file.display())), "{shown}");
        assert!(shown.contains("3 | "), "the line itself: {shown}");
        assert!(shown.contains(caret), "{shown}");
        assert!(!shown.contains("ParseErrors(") && !shown.contains("src: "), "{shown}");
    }
    // `serve` says the same when it refuses to start.
    let serve = toolgate(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--db",
        dir.path().join("t.db").to_str().unwrap(),
        "--policy",
        syntax.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&serve.stderr);
    assert!(said.contains(&format!("--> {}:3:33", syntax.display())), "{said}");
}

#[test]
fn policy_schema_lists_the_context_and_check_names_a_misspelled_attribute() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo.cedar");
    std::fs::write(
        &typo,
        "@id(\"t\") forbid (principal, action, resource) when { context.options.allow_wirte };",
    )
    .unwrap();

    let schema = toolgate(&["policy", "schema", "--format", "text"]);
    let cedar =
        toolgate(&["policy", "schema", "--config", "examples/policies/finance/toolgate.toml"]);
    let check = toolgate(&["policy", "check", typo.to_str().unwrap()]);

    assert!(
        stdout(&schema).contains("options: { allow_write, allow_bash }"),
        "{}",
        stdout(&schema)
    );
    // A Cedar schema Cedar reads, with the configuration's actions.
    let (cedar_schema, _) =
        cedar_policy::Schema::from_cedarschema_str(&stdout(&cedar)).expect("a Cedar schema");
    let actions: Vec<String> = cedar_schema.actions().map(|a| a.to_string()).collect();
    assert!(actions.contains(&r#"Action::"invoice.approve""#.to_owned()), "{actions:?}");
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains("`context.options.allow_wirte`"), "{}", stdout(&check));
}

#[test]
fn policy_test_runs_one_case_and_speaks_json() {
    let dir = "examples/policies/finance";
    let run = |extra: &[&str]| {
        let mut args = vec![
            "policy",
            "test",
            "examples/policies/finance/policy.cedar",
            "--cases",
            "examples/policies/finance/cases.toml",
            "--config",
            "examples/policies/finance/toolgate.toml",
        ];
        args.extend_from_slice(extra);
        toolgate(&args)
    };
    let all = run(&["--json"]);
    let one = run(&["--json", "--case", "small invoices"]);
    let none = run(&["--case", "no such case"]);

    let lines = |out: &std::process::Output| -> Vec<serde_json::Value> {
        stdout(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let (all, one) = (lines(&all), lines(&one));
    assert!(all.len() > 2, "{dir}: {all:?}");
    assert_eq!(one.len(), 2, "{one:?}");
    assert_eq!(one[0]["name"], "small invoices are approved");
    assert_eq!((one[0]["ok"].as_bool(), one[0]["outcome"].as_str()), (Some(true), Some("allow")));
    assert_eq!(one[1], serde_json::json!({ "passed": 1, "failed": 0 }));
    assert_eq!(all.last().unwrap()["passed"].as_u64(), Some(all.len() as u64 - 1));
    assert_eq!(none.status.code(), Some(2));
}

#[test]
fn policy_test_reports_each_case_and_fails_on_a_wrong_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases.toml");
    std::fs::write(
        &cases,
        "[[case]]\nname = \"reads\"\ntool = \"read\"\nexpect = \"allow\"\n\n\
         [[case]]\nname = \"writes\"\ntool = \"write\"\nexpect = \"allow\"\n",
    )
    .unwrap();

    let out = toolgate(&[
        "policy",
        "test",
        "src/policy/default.cedar",
        "--cases",
        cases.to_str().unwrap(),
    ]);

    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("ok reads"), "{text}");
    assert!(text.contains("FAILED writes: outcome deny, expected allow"), "{text}");
    assert!(text.contains("1 passed, 1 failed"), "{text}");
}

#[test]
fn every_example_policy_passes_its_cases() {
    let examples = Path::new("examples/policies");
    let mut tested = 0;
    for entry in std::fs::read_dir(examples).unwrap() {
        let dir = entry.unwrap().path();
        let mut args = vec![
            "policy".to_owned(),
            "test".to_owned(),
            dir.join("policy.cedar").display().to_string(),
            "--cases".to_owned(),
            dir.join("cases.toml").display().to_string(),
        ];
        if dir.join("toolgate.toml").exists() {
            args.extend(["--config".to_owned(), dir.join("toolgate.toml").display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = toolgate(&args);
        assert_eq!(out.status.code(), Some(0), "{}:\n{}", dir.display(), stdout(&out));
        assert!(stdout(&out).contains(", 0 failed"));
        tested += 1;
    }
    assert!(tested >= 3, "only {tested} example policies");
}

#[test]
fn decide_offline_shows_outcome_reason_and_policies() {
    let out = toolgate(&["decide", "--tool", "write", "--args", r#"{"path":"a.txt"}"#]);

    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "a deny exits 1, a problem found: {text}");
    assert!(text.contains("outcome: deny"), "{text}");
    assert!(text.contains("reason: tool requires allow_write=true: write"), "{text}");
    assert!(text.contains("policies: default.write_requires_allow_write"), "{text}");
}

#[test]
fn decide_offline_shows_the_rewritten_arguments() {
    let out = toolgate(&[
        "decide",
        "--policy",
        "examples/policies/coding/policy.cedar",
        "--tool",
        "bash",
        "--allow-bash",
        "--resource-id",
        "git clean -fd",
        "--args",
        r#"{"command":"git clean -fd"}"#,
    ]);

    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(5), "{text}");
    assert!(text.contains("outcome: rewrite"), "{text}");
    assert!(
        text.contains(r#"rewritten_args: {"command":"git clean -fd","dry_run":true}"#),
        "{text}"
    );
}

#[tokio::test]
async fn decide_against_a_server_is_recorded() {
    let app = spawn_app().await;

    // The address as `serve --listen` names it: every --server takes host:port.
    let address = app.url.trim_start_matches("http://");
    let out = toolgate_async(&["decide", "--server", address, "--tool", "read"]).await;

    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("outcome: allow"), "the trail's name, as offline: {text}");
    assert!(text.contains("recorded: decision"), "{text}");
    assert!(rows(&app.db).iter().any(|r| r.kind == "decision"));
}

#[tokio::test]
async fn replay_changes_nothing_under_the_same_policy_and_names_what_a_stricter_one_changes() {
    let mut app = spawn_app().await;
    // The sixth and seventh identical reads are loops: replay must count facts as the server did.
    for _ in 0..7 {
        app.decide(crate::helpers::request("read")).await;
    }
    let write = app
        .decide(crate::helpers::with_options(crate::helpers::request("write"), true, false))
        .await;
    app.decide(crate::helpers::request("bash")).await;
    let strict = app.dir.path().join("strict.cedar");
    let default = std::fs::read_to_string("src/policy/default.cedar").unwrap();
    std::fs::write(
        &strict,
        default.clone()
            + "\n@id(\"no-writes\") forbid (principal, action == Action::\"fs.write\", resource);",
    )
    .unwrap();
    let same = app.dir.path().join("same.cedar");
    std::fs::write(&same, default).unwrap();
    let db = app.db.to_str().unwrap().to_owned();

    let unchanged =
        toolgate_async(&["policy", "replay", "--db", &db, "--policy", same.to_str().unwrap()])
            .await;
    let stricter =
        toolgate_async(&["policy", "replay", "--db", &db, "--policy", strict.to_str().unwrap()])
            .await;

    let unchanged = stdout(&unchanged);
    assert!(unchanged.contains("replayed 9 decisions"), "{unchanged}");
    assert!(unchanged.contains(": 0 would change"), "{unchanged}");
    let stricter = stdout(&stricter);
    assert!(
        stricter.contains(&format!("seq {}: allow -> deny (no-writes)", write.seq)),
        "{stricter}"
    );
    assert!(stricter.contains(": 1 would change"), "{stricter}");
    assert!(stricter.contains("allow -> deny: 1"), "{stricter}");
}
