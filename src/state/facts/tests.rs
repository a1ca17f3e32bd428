use super::*;

fn call<'a>(session: &'a str, tool: &'a str, args_hash: &'a str, at_us: i64) -> Call<'a> {
    Call { session, task_type: "default", actor: "a", tool, args_hash, at_us }
}

#[test]
fn identical_calls_count_per_session_tool_and_arguments() {
    let facts = Facts::new(HashMap::from([("default".to_owned(), 100)]));
    for i in 0..5 {
        assert_eq!(facts.observe(call("s", "read", "h", i)).identical_calls, i as u64 + 1);
    }
    let other = facts.observe(call("s", "read", "other", 5));
    let elsewhere = facts.observe(call("t", "read", "h", 6));
    let back = facts.observe(call("s", "read", "h", 7));
    assert_eq!((other.identical_calls, other.consecutive_identical), (1, 1));
    assert_eq!(elsewhere.identical_calls, 1);
    assert_eq!((back.identical_calls, back.consecutive_identical), (6, 1));
    assert_eq!((back.session_calls, back.session_tool_calls, back.session_cap), (7, 7, 100));
}

#[test]
fn the_actor_rate_counts_only_the_last_minute() {
    let facts = Facts::new(HashMap::new());
    facts.observe(call("s", "read", "1", 0));
    facts.observe(call("s", "read", "2", 30_000_000));
    let later = facts.observe(call("s", "read", "3", 61_000_000));
    assert_eq!(later.actor_calls_last_minute, 2);
    assert_eq!(later.session_cap, u64::MAX);
}

#[test]
fn denials_are_counted_for_the_calls_after_them() {
    let facts = Facts::new(HashMap::new());
    facts.observe(call("s", "bash", "1", 0));
    facts.denied("a", "s");
    assert_eq!(facts.observe(call("s", "bash", "2", 1)).session_denials, 1);
}

#[test]
fn memory_is_bounded_by_forgetting_the_least_recently_active_sessions() {
    let facts = Facts::new(HashMap::new());
    let calls = MAX_TRACKED_CALLS as i64 + 2 * PRUNE_EVERY as i64;
    for n in 0..calls {
        let (session, hash) = (format!("s{}", n / 1000), n.to_string());
        facts.observe(call(&session, "read", &hash, n));
    }
    let state = facts.state.lock().unwrap();
    let tracked: usize = state.sessions.values().map(|s| s.per_call.len()).sum();
    assert!(tracked <= MAX_TRACKED_CALLS, "{tracked}");
    assert!(!state.sessions.contains_key(&facts.session_key("a", "s0")), "the oldest is forgotten");
    let newest = format!("s{}", (calls - 1) / 1000);
    assert!(state.sessions.contains_key(&facts.session_key("a", &newest)));
}

#[test]
fn another_actor_in_the_same_session_neither_raises_nor_resets_the_counts() {
    let facts = Facts::new(HashMap::new());
    for i in 0..3 {
        facts.observe(call("s", "read", "h", i));
    }
    let intruder = Call { actor: "intruder", ..call("s", "read", "h", 3) };
    assert_eq!(facts.observe(intruder).identical_calls, 1);
    facts.denied("intruder", "s");
    let own = facts.observe(call("s", "read", "h", 4));
    assert_eq!((own.identical_calls, own.consecutive_identical, own.session_denials), (4, 4, 0));
}

#[test]
fn long_names_and_many_actors_take_fixed_room() {
    let facts = Facts::new(HashMap::new());
    let long = "x".repeat(1024);
    for n in 0..(MAX_ACTORS + 2 * PRUNE_EVERY as usize) as i64 {
        let actor = format!("{long}{n}");
        facts.observe(Call { actor: &actor, ..call(&long, &long, "h", n) });
    }
    let state = facts.state.lock().unwrap();
    assert!(state.actors.len() <= MAX_ACTORS + PRUNE_EVERY as usize, "{}", state.actors.len());
}

#[test]
fn a_session_keeps_the_first_execution_of_each_class_it_read() {
    let facts = Facts::new(HashMap::new());
    facts.observe(call("s", "read", "1", 0));
    assert!(facts.observe(call("s", "post", "1", 1)).read_classes.is_empty());
    facts.read("a", "s", &["secret".into()], 7, 2);
    facts.read("a", "s", &["customer_pii".into(), "secret".into()], 9, 3);
    facts.read("intruder", "s", &["public".into()], 10, 4);
    let classes = |o: Observed| {
        o.read_classes.iter().map(|r| (r.class.to_string(), r.seq)).collect::<Vec<_>>()
    };
    assert_eq!(
        classes(facts.observe(call("s", "post", "2", 5))),
        [("secret".to_owned(), 7), ("customer_pii".to_owned(), 9)]
    );
    assert!(facts.observe(call("t", "post", "2", 6)).read_classes.is_empty());
}

#[test]
fn a_tainted_session_outlives_its_counts_for_a_month_and_then_goes() {
    let facts = Facts::new(HashMap::new());
    facts.observe(call("s", "read", "1", 0));
    facts.read("a", "s", &["secret".into()], 1, 0);
    let day = SESSION_IDLE_US;
    facts.state.lock().unwrap().prune(2 * day);
    let later = facts.observe(call("s", "post", "1", 2 * day));
    assert_eq!((later.session_calls, later.read_classes.len()), (1, 1), "counts gone, taint kept");
    facts.state.lock().unwrap().prune(2 * day + TAINT_IDLE_US);
    assert!(facts.read_classes("a", "s").is_empty());
}

#[test]
fn an_execution_records_what_it_read_and_nothing_else_does() {
    let mut record = crate::trail::Record::new(Kind::Execution);
    assert_eq!(Reads::cell(Vec::new()), None);
    record.request = Reads::cell(vec!["secret".into()]);
    assert_eq!(Reads::of(&record), ["secret"]);
    record.kind = Kind::Decision;
    assert!(Reads::of(&record).is_empty());
}

#[test]
fn flooding_the_cap_with_fresh_sessions_never_cleans_a_tainted_one() {
    let facts = Facts::new(HashMap::new());
    facts.read("a", "victim", &["secret".into()], 1, 0);
    facts.read("a", "other", &["customer_pii".into()], 2, 0);
    for n in 0..(MAX_TAINTED + 1100) as i64 {
        facts.read("flood", &n.to_string(), &["internal".into()], n + 3, n + 1);
    }
    assert!(facts.state.lock().unwrap().taints.len() <= MAX_TAINTED + 1024);
    let mut forgotten: Vec<String> = facts
        .read_classes("a", "victim")
        .iter()
        .map(|r| format!("{}@{}", r.class, r.seq))
        .collect();
    forgotten.sort();
    assert_eq!(forgotten, ["customer_pii@0", "internal@0", "secret@0"], "every class, no seq");
    assert!(facts.read_classes("a", "never-seen").is_empty());
    // Calling again gives it its entry back; a second flood forgets it again, still tainted.
    assert_eq!(facts.observe(call("victim", "post", "1", 1)).read_classes.len(), 3);
    for n in 0..(MAX_TAINTED + 1100) as i64 {
        facts.read("flood", &format!("again{n}"), &["internal".into()], n + 3, n + 2);
    }
    assert_eq!(facts.read_classes("a", "victim").len(), 3);
}
