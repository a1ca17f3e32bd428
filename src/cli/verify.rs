//! `toolgate verify`: walks the trail's hash chain (read directly or through a server), or checks
//! a CSV export, and names every broken place.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use indicatif::ProgressBar;

use super::Exit;
use super::remote::{TOKEN_ENV, connect_to};
use crate::audit::{verify_csv, verify_fleet, verify_trail};
use crate::fleet::store::FleetStore;
use crate::proto::{self, audit_client::AuditClient};
use crate::store::Reader;
use crate::text::{escaped, json_escaped};
use crate::trail::Anchors;
use crate::trail::Manifest;
use crate::trail::Report;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::cosignature::Witnesses;
use crate::trail::export::CsvChecks;
use crate::trail::note::{Note, NoteVerifier};
use crate::trail::proofs::ProofsReader;
use crate::trail::tlog_proof::{Proven, TlogProof};

/// Arguments of `toolgate verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The SQLite trail (read-only: a running server may keep writing it). With --csv, every
    /// exported row must also stand unchanged in it.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Ask a running server to verify its trail: `host:port`, `http(s)://host:port` or `unix:/path` (by default
    /// `$TOOLGATE_SERVER`, else 127.0.0.1:50051); the auditor's token from `TOOLGATE_TOKEN`
    /// when its auth is on.
    #[arg(long, conflicts_with_all = ["db", "csv"])]
    pub server: Option<String>,
    /// Verify the fleet store (`postgres://…`): every node's chain, tree and checkpoints, the
    /// signatures with the key each node was registered with.
    #[arg(long, conflicts_with_all = ["db", "csv", "server"])]
    pub postgres: Option<String>,
    /// With --postgres: only this node. With --server: the node whose trail a fleet server
    /// (`serve --audit-only`) is to verify.
    #[arg(long)]
    pub node: Option<String>,
    /// Verify this CSV export instead of the trail.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// The export was filtered: gaps between rows are expected.
    #[arg(long, requires = "csv")]
    pub filtered: bool,
    /// The export's manifest: the file must match it (hash, rows, seq range, head).
    #[arg(long, requires = "csv")]
    pub manifest: Option<PathBuf>,
    /// The export's proofs file (`export --proofs`); by default the one the manifest names,
    /// beside the manifest.
    #[arg(long, requires = "csv")]
    pub proofs: Option<PathBuf>,
    /// First seq to verify (trail only).
    #[arg(long, default_value_t = 1, conflicts_with = "csv")]
    pub from: i64,
    /// Last seq to verify (trail only); the head when absent.
    #[arg(long, conflicts_with = "csv")]
    pub to: Option<i64>,
    /// A signed checkpoint kept elsewhere (the file `toolgate checkpoint` printed): its
    /// signature is checked with --key, and the trail must extend it.
    /// With --csv: every exported row the checkpoint covers must be proven in its tree by the
    /// export's proofs (without --checkpoint, the manifest's checkpoint is used).
    #[arg(long, requires = "key", conflicts_with = "server")]
    pub checkpoint: Option<PathBuf>,
    /// The log's verifier key (`<name>+<id>+<key>`, as `toolgate keygen` printed it): every
    /// checkpoint on the trail must be signed by one of the keys given (give the keys a
    /// rotation replaced too); a checkpoint given with --checkpoint by one of them; with
    /// --manifest, the manifest's signature by one of them.
    #[arg(long, conflicts_with = "server")]
    pub key: Vec<String>,
    /// A witness's cosignature verifier key (`toolgate keygen --witness` printed it): the
    /// checkpoint given with --checkpoint must carry its valid cosignature; with --postgres,
    /// every node's last checkpoint in the store. Repeatable.
    #[arg(long)]
    pub witness: Vec<String>,
    /// How many of the --witness keys must have cosigned the checkpoint (k of n); all of them
    /// when absent.
    #[arg(long, requires = "witness")]
    pub witnesses_required: Option<usize>,
    /// With --db: the archive holding what retention pruned from the trail (`file:///…`,
    /// `s3://bucket/prefix`), verified too (with --key) and joined to the trail where its
    /// last prune event says: one history, and which part is where.
    #[arg(long, requires_all = ["db", "key"], conflicts_with_all = ["csv", "server", "postgres"])]
    pub archive: Option<String>,
    /// An option of the archive's store, `name=value` as `[archive] options` (repeatable).
    #[arg(long = "archive-option", value_parser = super::archive::option, requires = "archive")]
    pub archive_options: Vec<(String, String)>,
    /// Verify one event's offline proof (`toolgate proof`, C2SP tlog-proof), or each of the
    /// proofs one after the other in a file (an export's proofs file), instead of a trail: the
    /// checkpoint signed by a --key, cosigned by the --witness keys required, and the event it
    /// carries included in its tree. Prints each event.
    #[arg(
        long,
        requires = "key",
        conflicts_with_all = ["db", "server", "postgres", "csv", "checkpoint"]
    )]
    pub proof: Option<PathBuf>,
}

/// Verifies, prints one line per problem and a summary; exit 1 when anything is broken.
pub async fn verify(args: VerifyArgs) -> anyhow::Result<Exit> {
    let progress = ProgressBar::new_spinner();
    let on_page = |checked: u64| progress.set_message(format!("{checked} checked"));
    if let Some(path) = &args.proof {
        return proof(path, &args);
    }
    anyhow::ensure!(
        args.witness.is_empty() || args.checkpoint.is_some() || args.postgres.is_some(),
        "--witness needs --checkpoint, --proof or --postgres"
    );
    anyhow::ensure!(
        args.node.is_none() || args.postgres.is_some() || args.server.is_some(),
        "--node needs --postgres or --server"
    );
    if let Some(node) = &args.node {
        super::args::check_node(node)?;
    }
    let findings = if let Some(url) = args.postgres.as_deref().map(super::args::postgres_url) {
        let witnesses = super::args::witnesses(&args.witness, args.witnesses_required)?;
        let store = FleetStore::connect(url).await?;
        let reports = verify_fleet(&store, args.node.as_deref(), &witnesses).await?;
        if let Some(node) = args.node.as_ref().filter(|_| reports.is_empty()) {
            anyhow::bail!("the fleet store has no node {node:?}");
        }
        fleet_findings(reports)
    } else if let Some(url) = &args.server {
        remote(Some(url), args.from, args.to, args.node.clone()).await?
    } else if let Some(csv) = &args.csv {
        verify_export(&args, csv, on_page).await?
    } else if let Some(db) = &args.db {
        verify_file(&args, db, on_page).await?
    } else {
        remote(None, args.from, args.to, args.node.clone()).await?
    };
    progress.finish_and_clear();
    Ok(print(&findings))
}

/// The keys and the checkpoint to verify against (--checkpoint, or else `embedded`, a
/// manifest's), its signature checked when keys are given.
fn anchors(args: &VerifyArgs, embedded: Option<&str>) -> anyhow::Result<Anchors> {
    let keys = log_keys(&args.key)?;
    let Witnesses { keys: witnesses, required } =
        super::args::witnesses(&args.witness, args.witnesses_required)?;
    let given = match &args.checkpoint {
        Some(path) => Some((
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read `{}`", path.display()))?,
            format!("`{}`", path.display()),
        )),
        None => embedded.map(|note| (note.to_owned(), "the manifest's checkpoint".to_owned())),
    };
    let (checkpoint, cosigned) = match given {
        Some((note, named)) => {
            let checkpoint = if keys.is_empty() {
                Checkpoint::read(&note).with_context(|| format!("{named} does not read"))?
            } else {
                match keys.iter().find_map(|key| Checkpoint::open(&note, key).ok()) {
                    Some(checkpoint) => checkpoint,
                    // Say the real cause: a text that is no checkpoint (a size with a leading
                    // zero, say) is not a key's fault.
                    None => match Checkpoint::read(&note) {
                        Err(error) => Err(error).context(format!("{named} does not read"))?,
                        Ok(_) => anyhow::bail!("{named} is not signed by any --key"),
                    },
                }
            };
            let parsed = Note::parse(&note)?;
            let cosigned = witnesses.iter().filter(|w| w.cosigned(&parsed).is_some()).count();
            (Some(checkpoint), cosigned)
        }
        None => (None, 0),
    };
    Ok(Anchors { checkpoint, keys, cosigned, cosignatures_required: required })
}

/// Verifies the offline proof at `path`: prints the event it proves and where, or what is
/// wrong with it (exit 1).
fn proof(path: &Path, args: &VerifyArgs) -> anyhow::Result<Exit> {
    let keys = log_keys(&args.key)?;
    let witnesses = super::args::witnesses(&args.witness, args.witnesses_required)?;
    let file = File::open(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    let mut proofs = ProofsReader::new(BufReader::new(file));
    let (mut exit, mut read) = (Exit::Ok, 0);
    let broken = |why: &str| {
        println!("BROKEN {}: {}", escaped(&path.display().to_string()), escaped(why));
        Exit::Found
    };
    loop {
        let (at, text) = match proofs.next_text() {
            Ok(Some(next)) => next,
            Ok(None) if read == 0 => return Ok(broken("no proof in the file")),
            Ok(None) => break,
            Err(why) => return Ok(broken(&why)),
        };
        read += 1;
        match TlogProof::parse(&text).and_then(|proof| proof.verify(&keys, &witnesses)) {
            Ok(Proven { event, checkpoint, signed_by, cosigned }) => {
                let witnessed = match witnesses.keys.len() {
                    0 => "no witnesses given".to_owned(),
                    given => format!(
                        "cosigned by {cosigned} of the {given} witnesses given ({} required)",
                        witnesses.required
                    ),
                };
                println!(
                    "proven: seq {} ({}) is in the tree of {} events of the checkpoint of {}, signed by {}; {witnessed}",
                    event.seq,
                    event.record.kind,
                    checkpoint.size,
                    escaped(&checkpoint.origin),
                    escaped(&signed_by),
                );
                println!("{}", json_escaped(&serde_json::to_string(&event)?));
            }
            Err(e) => exit = broken(&format!("proofs line {at}: {e}")),
        }
    }
    Ok(exit)
}

/// The `--key` verifier keys given.
fn log_keys(keys: &[String]) -> anyhow::Result<Vec<NoteVerifier>> {
    keys.iter()
        .map(|key| NoteVerifier::parse(key).with_context(|| format!("--key `{key}`")))
        .collect()
}

/// Verifies an export (`--csv`): its rows as a chain, against its manifest, its anchors and,
/// with a checkpoint, each row by its proof; against the trail's file with `--db`.
async fn verify_export(
    args: &VerifyArgs,
    csv: &std::path::Path,
    on_page: impl Fn(u64),
) -> anyhow::Result<Findings> {
    let file = File::open(csv).with_context(|| format!("cannot open `{}`", csv.display()))?;
    let trail = match &args.db {
        Some(db) => Some(Reader::open(db).await?),
        None => None,
    };
    let manifest: Option<Manifest> = match &args.manifest {
        Some(path) => Some(
            serde_json::from_slice(&std::fs::read(path)?)
                .with_context(|| format!("`{}` is not a toolgate manifest", path.display()))?,
        ),
        None => None,
    };
    let embedded = manifest.as_ref().and_then(|m| m.checkpoint.as_deref());
    let anchors = anchors(args, embedded)?;
    let proofs_file = args.proofs.clone().or_else(|| {
        let name = manifest.as_ref()?.proofs_file.as_ref()?;
        Some(args.manifest.as_ref()?.with_file_name(name))
    });
    let proofs = match proofs_file.filter(|_| anchors.checkpoint.is_some()) {
        Some(path) => {
            let file =
                File::open(&path).with_context(|| format!("cannot open `{}`", path.display()))?;
            let read: Box<dyn std::io::BufRead + Send> = Box::new(BufReader::new(file));
            Some(ProofsReader::new(read))
        }
        None => None,
    };
    let checks =
        CsvChecks { filtered: args.filtered, manifest: manifest.as_ref(), anchors, proofs };
    let mut findings: Findings = verify_csv(file, checks, trail.as_ref(), on_page).await?.into();
    // Rows missing between seqs are what a filtered export looks like: say so.
    let gaps = findings.problems.iter().any(|problem| problem.ends_with(": missing"));
    if gaps && !args.filtered && manifest.is_none() {
        let hint = "hint: rows are missing between seqs, as in an export made with a filter \
                    (--session, --since, …): verify it with --filtered, or with its --manifest";
        findings.anchored = Some(
            findings.anchored.into_iter().chain([hint.to_owned()]).collect::<Vec<_>>().join("\n"),
        );
    }
    Ok(findings)
}

/// Verifies a trail's file (`--db`): its chain, its tree and its anchors, and what a prune
/// took from it against the archive (`--archive`).
async fn verify_file(
    args: &VerifyArgs,
    db: &std::path::Path,
    on_page: impl Fn(u64),
) -> anyhow::Result<Findings> {
    let anchors = anchors(args, None)?;
    let reader = Reader::open(db).await?;
    let report = verify_trail(&reader, args.from, args.to, &anchors, on_page).await?;
    reader.close().await;
    let prefix = report.pruned.clone();
    let mut findings: Findings = report.into();
    match (&args.archive, prefix) {
        (Some(url), prefix) => {
            let joined = joined(url, &args.archive_options, &anchors.keys, prefix).await?;
            findings.problems.extend(joined.problems);
            findings.anchored = Some(
                findings.anchored.into_iter().chain([joined.said]).collect::<Vec<_>>().join("\n"),
            );
        }
        (None, Some(prefix)) => {
            let said = format!(
                "seq 1–{} were pruned from this file (the prune event at seq {}) and are in the archive {}: give --archive to verify them too",
                prefix.through,
                prefix.seq,
                crate::text::escaped(&prefix.archive)
            );
            findings.anchored =
                Some(findings.anchored.into_iter().chain([said]).collect::<Vec<_>>().join("\n"));
        }
        (None, None) => {}
    }
    Ok(findings)
}

/// The archive as verified and joined to the trail.
struct Joined {
    problems: Vec<String>,
    said: String,
}

/// Verifies the archive at `url` (its checkpoint signed by one of `keys`) and, for a trail
/// whose first events were pruned (`prefix`), that the archive's first events are those: the
/// root of their tree and the last one's hash are the prune event's.
async fn joined(
    url: &str,
    options: &[(String, String)],
    keys: &[NoteVerifier],
    prefix: Option<crate::trail::Prefix>,
) -> anyhow::Result<Joined> {
    let archive = super::archive::open(url, options)?;
    let at = prefix.as_ref().map(|p| p.through.unsigned_abs());
    let mut found = None;
    for key in keys {
        let checked = crate::archive::check::verify(&archive, key, at).await?;
        let signed = !checked.problems.iter().any(|p| p.starts_with("checkpoint:"));
        found = Some(checked);
        if signed {
            break;
        }
    }
    let found = found.context("--archive needs --key")?;
    let mut problems: Vec<String> =
        found.problems.iter().map(|p| format!("archive: {}", crate::text::escaped(p))).collect();
    let url = crate::text::escaped(url);
    let said = match prefix {
        Some(prefix) => {
            match found.at {
                Some((root, last)) if root == prefix.root && last == prefix.hash => {}
                Some(_) => problems.push(format!(
                    "archive: its events 1–{} are not the ones pruned (the root of their tree or the last one's hash differs from the prune event at seq {})",
                    prefix.through, prefix.seq
                )),
                None => problems.push(format!(
                    "archive: it does not reach seq {}, which the prune event at seq {} pruned",
                    prefix.through, prefix.seq
                )),
            }
            format!(
                "seq 1–{}: in the archive {url} ({} archived events checked against its checkpoint of size {}); seq {} on: in this file",
                prefix.through,
                found.events,
                found.size,
                prefix.through + 1
            )
        }
        None => format!(
            "the archive {url}: {} events checked against its checkpoint of size {}; nothing was pruned from this file",
            found.events, found.size
        ),
    };
    Ok(Joined { problems, said })
}

/// A verification's findings as printed.
struct Findings {
    checked: u64,
    problems: Vec<String>,
    last: Option<(i64, String)>,
    /// What the checkpoints said, for the summary.
    anchored: Option<String>,
}

impl From<Report> for Findings {
    fn from(report: Report) -> Self {
        let problems = report.problems.iter().map(ToString::to_string).collect();
        let signatures =
            if report.signatures_checked { "signed" } else { "signatures not checked: give --key" };
        let mut anchored = Vec::new();
        if report.proven > 0 {
            let checkpoint = if report.signatures_checked {
                "the checkpoint's tree (its signature checked)"
            } else {
                "the tree of a checkpoint whose signature was NOT checked: give --key"
            };
            anchored.push(format!(
                "proofs: {} rows proven in {checkpoint}; {} rows after it are covered by none",
                report.proven, report.uncovered
            ));
        } else if report.checkpoints > 0 || report.uncovered > 0 {
            anchored.push(format!(
                "checkpoints: {} on the trail match its tree ({signatures}); {} events after the last one are covered by none",
                report.checkpoints, report.uncovered
            ));
        }
        if report.manifest_signed {
            anchored.push("manifest: its signature was checked".to_owned());
        }
        let anchored = (!anchored.is_empty()).then(|| anchored.join("\n"));
        Self { checked: report.checked, problems, last: report.last, anchored }
    }
}

/// A fleet's reports as one set of findings, each problem named by its node.
fn fleet_findings(reports: Vec<(String, Report)>) -> Findings {
    let mut findings = Findings { checked: 0, problems: Vec::new(), last: None, anchored: None };
    let mut lines = Vec::new();
    for (node, report) in reports {
        findings.checked += report.checked;
        findings.problems.extend(report.problems.iter().map(|p| format!("node {node:?}: {p}")));
        let head = report
            .last
            .as_ref()
            .map_or_else(|| "empty".to_owned(), |(s, _)| format!("head seq {s}"));
        lines.push(format!(
            "node {node:?}: {} events, {head}, {} checkpoints ({}), {} events after the last",
            report.checked,
            report.checkpoints,
            if report.signatures_checked { "signed" } else { "no key registered" },
            report.uncovered
        ));
        if let Some(cut) = &report.pruned {
            lines.push(format!(
                "node {node:?}: seq 1–{} were dropped from the store by retention, after they were verified in the node's archive {} and covered by the checkpoint at seq {}; the store's events go on from seq {}",
                cut.through,
                crate::text::escaped(&cut.archive),
                cut.seq,
                cut.through + 1
            ));
        }
        findings.last = report.last.or(findings.last);
    }
    findings.anchored = (!lines.is_empty()).then(|| lines.join("\n"));
    findings
}

async fn remote(
    server: Option<&str>,
    from: i64,
    to: Option<i64>,
    node: Option<String>,
) -> anyhow::Result<Findings> {
    let (channel, bearer) = connect_to(server, TOKEN_ENV).await?;
    let mut client = AuditClient::with_interceptor(channel, bearer);
    let request = proto::VerifyRequest {
        from_seq: from.unsigned_abs(),
        to_seq: to.unwrap_or(0).unsigned_abs(),
        node_id: node.unwrap_or_default(),
    };
    let answer = client.verify(request).await?.into_inner();
    let problems = answer.problems.into_iter().map(|p| p.message).collect();
    let last = (answer.last_seq > 0).then_some((answer.last_seq as i64, answer.last_hash));
    Ok(Findings { checked: answer.checked, problems, last, anchored: None })
}

fn print(findings: &Findings) -> Exit {
    for problem in &findings.problems {
        println!("BROKEN {problem}");
    }
    let exit = if findings.problems.is_empty() {
        match &findings.last {
            Some((seq, hash)) => {
                println!("intact: {} events, head seq {seq} hash {hash}", findings.checked)
            }
            None => println!("intact: nothing to verify"),
        }
        Exit::Ok
    } else {
        println!("broken: {} problem(s) in {} events", findings.problems.len(), findings.checked);
        Exit::Found
    };
    if let Some(anchored) = &findings.anchored {
        println!("{anchored}");
    }
    exit
}
