//! Exports that prove themselves: `export --proofs --sign-key` against a real server's signed
//! trail, then `verify --csv` with no database. Every row is proven in the signed tree; a file
//! cut short with its manifest re-forged, a proof swapped, and a manifest changed after signing
//! are all caught.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};
use toolgate::trail::proofs::ProofsReader;
use toolgate::trail::tlog_proof::TlogProof;

use crate::checkpoints::signing_app;
use crate::helpers::toolgate;

/// A finished export: the CSV, its manifest and proofs, and the log's verifier key.
struct Exported {
    _dir: tempfile::TempDir,
    csv: PathBuf,
    manifest: PathBuf,
    proofs: PathBuf,
    key: String,
}

async fn exported(extra: &[&str]) -> Exported {
    let dir = tempfile::tempdir().unwrap();
    let (app, key) = signing_app(dir.path()).await;
    let (_tmp, db) = app.stop().await;
    let (csv, manifest, proofs) =
        (dir.path().join("t.csv"), dir.path().join("t.json"), dir.path().join("t.proofs"));
    let key_file = dir.path().join("log.key");
    let mut args = vec!["export", "--db", db.to_str().unwrap(), "--output", csv.to_str().unwrap()];
    args.extend(["--manifest", manifest.to_str().unwrap(), "--proofs", proofs.to_str().unwrap()]);
    args.extend(["--sign-key", key_file.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let out = tokio::task::spawn_blocking({
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        move || toolgate(&args.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Only the export travels: the database is gone.
    std::fs::remove_file(&db).unwrap();
    Exported { _dir: dir, csv, manifest, proofs, key }
}

/// `toolgate verify` of an export with its manifest: the exit code and what it said.
pub(crate) fn verify(csv: &Path, manifest: &Path, key: &str) -> (Option<i32>, String) {
    let out = toolgate(&[
        "verify",
        "--csv",
        csv.to_str().unwrap(),
        "--manifest",
        manifest.to_str().unwrap(),
        "--key",
        key,
    ]);
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn sha256(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_of_an_export_is_proven_in_the_signed_tree_without_the_database() {
    let e = exported(&[]).await;
    let manifest: Value = serde_json::from_slice(&std::fs::read(&e.manifest).unwrap()).unwrap();
    let checkpoint = manifest["checkpoint"].as_str().unwrap();
    let size: u64 = checkpoint.lines().nth(1).unwrap().parse().unwrap();
    assert!(size >= 40, "{checkpoint}");
    assert!(manifest["signature"].as_str().unwrap().starts_with("toolgate-manifest/v1\n"));
    let (code, out) = verify(&e.csv, &e.manifest, &e.key);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(&format!("proofs: {size} rows proven in the checkpoint's tree")), "{out}");
    assert!(out.contains("manifest: its signature was checked"), "{out}");
    // Without a key, the summary says the checkpoint's signature was not checked.
    let bare = toolgate(&[
        "verify",
        "--csv",
        e.csv.to_str().unwrap(),
        "--manifest",
        e.manifest.to_str().unwrap(),
    ]);
    let bare = String::from_utf8_lossy(&bare.stdout);
    assert!(bare.contains("whose signature was NOT checked: give --key"), "{bare}");
    // The same, anchored on a checkpoint the auditor kept (here: the one the export carries).
    let saved = e.csv.with_file_name("saved.checkpoint");
    std::fs::write(&saved, checkpoint).unwrap();
    let out = toolgate(&[
        "verify",
        "--csv",
        e.csv.to_str().unwrap(),
        "--proofs",
        e.proofs.to_str().unwrap(),
        "--checkpoint",
        saved.to_str().unwrap(),
        "--key",
        &e.key,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));

    // A file cut short, its manifest's rows, last_seq and csv_sha256 re-forged.
    let bytes = std::fs::read(&e.csv).unwrap();
    let mut rows = csv::ReaderBuilder::new().has_headers(false).from_reader(bytes.as_slice());
    let starts: Vec<usize> =
        rows.records().map(|r| r.unwrap().position().unwrap().byte() as usize).collect();
    let cut = e.csv.with_file_name("cut.csv");
    std::fs::write(&cut, &bytes[..starts[starts.len() - 5]]).unwrap();
    let mut forged = manifest.clone();
    let rows = manifest["rows"].as_u64().unwrap() - 5;
    forged["rows"] = rows.into();
    forged["last_seq"] = (manifest["last_seq"].as_i64().unwrap() - 5).into();
    forged["head_seq"] = forged["last_seq"].clone();
    forged["csv_sha256"] = sha256(&cut).into();
    let forged_path = e.manifest.with_file_name("forged.json");
    std::fs::write(&forged_path, serde_json::to_vec(&forged).unwrap()).unwrap();
    let (code, out) = verify(&cut, &forged_path, &e.key);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("the trail is shorter than the checkpoint"), "{out}");
    assert!(out.contains("manifest: its signature is missing"), "{out}");
    // The signature dropped as well: the checkpoint still catches the cut.
    forged.as_object_mut().unwrap().remove("signature");
    std::fs::write(&forged_path, serde_json::to_vec(&forged).unwrap()).unwrap();
    let (code, out) = verify(&cut, &forged_path, &e.key);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("the trail is shorter than the checkpoint"), "{out}");

    // Each row's proof is a tlog-proof that proves its row alone, the file all of them.
    let proofs = std::fs::read_to_string(&e.proofs).unwrap();
    let bundles = bundles(&proofs);
    assert_eq!(bundles.len() as u64, size, "a proof for each row the checkpoint covers");
    let alone = e.proofs.with_file_name("row-11.tlog-proof");
    std::fs::write(&alone, bundles[10].encode()).unwrap();
    let out = toolgate(&["verify", "--proof", alone.to_str().unwrap(), "--key", &e.key]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.starts_with("proven: seq 11 "), "{said}");
    let out = toolgate(&["verify", "--proof", e.proofs.to_str().unwrap(), "--key", &e.key]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches("proven: seq").count() as u64, size, "{said}");

    // One proof's hashes replaced by another row's: that row is not proven, and the proofs'
    // hash differs.
    let mut swapped = bundles.clone();
    swapped[10].hashes = bundles[20].hashes.clone();
    let text: String = swapped.iter().map(TlogProof::encode).collect();
    std::fs::write(&e.proofs, text).unwrap();
    let (code, out) = verify(&e.csv, &e.manifest, &e.key);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("BROKEN seq 11: no inclusion proof leads"), "{out}");
    assert!(out.contains("proofs_sha256 differs"), "{out}");
}

/// The tlog-proofs of a proofs file, in its order.
fn bundles(text: &str) -> Vec<TlogProof> {
    let mut reader = ProofsReader::new(text.as_bytes());
    std::iter::from_fn(|| reader.next_text().unwrap())
        .map(|(_, proof)| TlogProof::parse(&proof).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filtered_export_proves_its_rows_and_a_changed_manifest_is_refused() {
    let e = exported(&["--kind", "decision"]).await;
    let (code, out) = verify(&e.csv, &e.manifest, &e.key);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("proofs: 40 rows proven"), "{out}");
    // The filter widened after signing: the signature no longer matches.
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&e.manifest).unwrap()).unwrap();
    manifest["filter"] = serde_json::json!({"kind": "execution"});
    std::fs::write(&e.manifest, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let (code, out) = verify(&e.csv, &e.manifest, &e.key);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("no longer matches its fields"), "{out}");
}
