//! One event's offline proof (C2SP `tlog-proof`) from a real server with a real witness: the
//! Audit RPC and `toolgate proof` write the same bundle, Cloudflare's ports of Go's `sumdb/tlog`
//! and `sumdb/note` accept its inclusion proof and checkpoint signature, `verify --proof`
//! proves the event it carries, and a bundle that lies is refused.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};
use toolgate::proto::TlogProofRequest;
use toolgate::proto::audit_client::AuditClient;
use toolgate::trail::tlog_proof::TlogProof;
use toolgate::trail::{GENESIS_HASH, encode};

use crate::helpers::{spawn_app, toolgate_async};
use crate::witnesses::{Witnessed, keygen, witnessed};

fn said(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_travels_alone_and_outside_verifiers_accept_its_proof() {
    let Witnessed { dir, log_key, witness_key, absent_key, note, app, witness: _witness } =
        witnessed().await;
    let size: u64 = note.lines().nth(1).unwrap().parse().unwrap();

    // The RPC, and the command line against the server and against the file, for seq 3 in
    // the tree of that checkpoint.
    let mut audit = AuditClient::new(app.channel.clone());
    let ask = TlogProofRequest { seq: 3, tree_size: size };
    let answer = audit.tlog_proof(ask).await.unwrap().into_inner();
    assert_eq!(answer.tree_size, size);
    let text = answer.proof;
    let file = dir.path().join("seq-3.tlog-proof");
    let (size_arg, file_arg) = (size.to_string(), file.to_str().unwrap().to_owned());
    let db = app.db.to_str().unwrap().to_owned();
    let by_server =
        toolgate_async(&["proof", "3", "--server", &app.url, "--size", &size_arg, "-o", &file_arg])
            .await;
    assert!(by_server.status.success(), "{}", said(&by_server));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let by_file = toolgate_async(&["proof", "3", "--db", &db, "--size", &size_arg]).await;
    assert_eq!(String::from_utf8(by_file.stdout).unwrap(), text);

    // The bundle is the spec's: its header, the extra data, the index, the hashes, a blank
    // line and the checkpoint verbatim, cosigned.
    let proof = TlogProof::parse(&text).unwrap();
    assert!(text.starts_with("c2sp.org/tlog-proof@v1\nextra "), "{text}");
    assert!(text.contains("\nindex 2\n"), "{text}");
    assert_eq!(proof.checkpoint, note);
    assert!(proof.checkpoint.contains("\n\u{2014} witness.test/w1 "), "{}", proof.checkpoint);

    // Outside verifiers. The leaf is the event's chain hash, SHA-256 of the extra data: the
    // inclusion proof leads to the checkpoint's root by tlog_tiles (Go's sumdb/tlog ported),
    // and the log's key signed the checkpoint by signed_note (Go's sumdb/note ported).
    let extra = proof.extra.clone().unwrap();
    let leaf = tlog_tiles::record_hash(&Sha256::digest(&extra));
    let body = &proof.checkpoint.as_bytes()[..proof.checkpoint.rfind("\n\n").unwrap() + 1];
    let checkpoint = tlog_tiles::Checkpoint::from_bytes(body).unwrap();
    let hashes: Vec<tlog_tiles::Hash> = proof.hashes.iter().map(|h| tlog_tiles::Hash(*h)).collect();
    tlog_tiles::check_record(&hashes, checkpoint.size(), *checkpoint.hash(), 2, leaf).unwrap();
    let verifier = signed_note::StandardVerifier::new(&log_key).unwrap();
    let known = signed_note::VerifierList::new(vec![Box::new(verifier)]);
    let opened = signed_note::Note::from_bytes(proof.checkpoint.as_bytes()).unwrap();
    let (verified, _) = opened.verify(&known).unwrap();
    assert_eq!(verified.len(), 1);

    // And by Go's own sumdb/note and sumdb/tlog (Debian's golang-golang-x-mod-dev), through
    // tests/tlog-proof/verify.go, which scripts/test builds.
    let go = std::env::var("TOOLGATE_TEST_GO_TLOG_PROOF").expect(
        "TOOLGATE_TEST_GO_TLOG_PROOF is not set: run ./scripts/test, which builds \
         tests/tlog-proof/verify.go with Debian's Go and golang.org/x/mod",
    );
    let checked = std::process::Command::new(&go).args([&file_arg, &log_key]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&checked.stdout),
        format!("ok 2 {size}\n"),
        "{}",
        said(&checked)
    );
    let mut bent = text.clone().into_bytes();
    let at = text.find("\nindex 2\n").unwrap() + "\nindex 2\n".len();
    bent[at] = if bent[at] == b'A' { b'B' } else { b'A' };
    let bent_file = dir.path().join("bent.tlog-proof");
    std::fs::write(&bent_file, bent).unwrap();
    let refused = std::process::Command::new(&go)
        .args([bent_file.to_str().unwrap(), &log_key])
        .output()
        .unwrap();
    assert!(!refused.status.success(), "Go accepted a bent proof");

    // The extra data is the event as the trail holds it.
    let stored = crate::checkpoints::events(&rusqlite::Connection::open(&app.db).unwrap());
    let third = stored.into_iter().find(|e| e.seq == 3).unwrap();
    let mut expected = toolgate::trail::decode(&third.prev_hash).unwrap().to_vec();
    expected.extend_from_slice(&encode(&third));
    assert_eq!(extra, expected);
    assert_ne!(third.prev_hash, hex::encode(GENESIS_HASH));

    // `verify --proof`: the event, where it is, and who cosigned.
    let verify = |extra: Vec<&str>| {
        let mut args = vec!["verify", "--proof", &file_arg, "--key", &log_key];
        args.extend(extra);
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            toolgate_async(&args).await
        }
    };
    let out = verify(vec!["--witness", &witness_key]).await;
    assert!(out.status.success(), "{}", said(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with(&format!("proven: seq 3 (decision) is in the tree of {size} events of the checkpoint of toolgate/node-1, signed by toolgate/node-1; cosigned by 1 of the 1 witnesses given (1 required)")), "{stdout}");
    assert!(stdout.contains(&format!("\"event_id\":\"{}\"", third.event_id)), "{stdout}");
    let out = verify(vec!["--witness", &witness_key, "--witness", &absent_key]).await;
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(
        said(&out).contains("1 of the 2 witness cosignatures required verify"),
        "{}",
        said(&out)
    );

    // A bundle that lies: the event changed, its seq and everything else kept.
    let mut changed = third.clone();
    changed.record.tool = Some("rm".into());
    let mut forged = proof.clone();
    forged.extra = TlogProof::of(&changed, vec![], String::new()).unwrap().extra;
    std::fs::write(&file, forged.encode()).unwrap();
    let out = verify(vec![]).await;
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(said(&out).contains("does not lead to the checkpoint's root"), "{}", said(&out));
    // Another log's key.
    std::fs::write(&file, &text).unwrap();
    let (_, stranger) = keygen(dir.path(), "toolgate/node-1-other", false);
    let out = toolgate_async(&["verify", "--proof", &file_arg, "--key", &stranger]).await;
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    // Not a proof at all.
    std::fs::write(&file, BASE64.encode(&text)).unwrap();
    let out = verify(vec![]).await;
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    app.stop().await;
}

#[tokio::test]
async fn a_proof_is_refused_for_what_no_checkpoint_covers() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _) = crate::checkpoints::signing_app(dir.path()).await;
    let mut audit = AuditClient::new(app.channel.clone());
    let refused = |seq, tree_size| {
        let mut audit = audit.clone();
        async move { audit.tlog_proof(TlogProofRequest { seq, tree_size }).await.unwrap_err() }
    };
    let zero = refused(0, 0).await;
    assert_eq!(zero.code(), tonic::Code::InvalidArgument);
    assert!(zero.message().starts_with("seq:"), "{}", zero.message());
    let beyond = refused(10_000, 0).await;
    assert_eq!(beyond.code(), tonic::Code::FailedPrecondition, "{}", beyond.message());
    let no_such = refused(1, 7).await;
    assert_eq!(no_such.code(), tonic::Code::NotFound, "{}", no_such.message());
    // An event the checkpoint covers is proven.
    assert!(audit.tlog_proof(TlogProofRequest { seq: 1, tree_size: 0 }).await.is_ok());
    app.stop().await;

    // A trail that signs no checkpoints has nothing to prove events in.
    let unsigned = spawn_app().await;
    let mut audit = AuditClient::new(unsigned.channel.clone());
    let none = audit.tlog_proof(TlogProofRequest { seq: 1, tree_size: 0 }).await.unwrap_err();
    assert_eq!(none.code(), tonic::Code::NotFound, "{}", none.message());
    unsigned.stop().await;
}
