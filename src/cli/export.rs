//! `toolgate export`: the events that match a filter as CSV (docs/csv-export.md), with an
//! optional manifest that lets the receiver check the file, signed on request, and each row's
//! inclusion proof in the latest signed checkpoint on request.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use chrono::{SecondsFormat, Utc};
use clap::Args;
use indicatif::ProgressBar;
use sha2::{Digest, Sha256};

use super::Exit;
use super::args::{FilterArgs, Source, SourceArgs};
use crate::audit::{Export, Finished, Origin};
use crate::fleet::store::FleetStore;
use crate::proto;
use crate::request::WireFilter;
use crate::store::{PAGE, Reader};
use crate::trail::MANIFEST_FORMAT;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::note::NoteSigner;
use crate::trail::{Filter, Manifest};

/// What `toolgate export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// CSV (docs/csv-export.md), with the manifest and proofs.
    Csv,
    /// One event per line: a JSON object of the trail's columns, as `query --json`.
    Jsonl,
    /// One OCSF 1.8.0 API Activity event per line (docs/ocsf.md).
    Ocsf,
}

/// Arguments of `toolgate export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// What to write.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: Format,
    /// With --format ocsf: the sidecar's name as `src_endpoint.name` (by default this host's).
    #[arg(long)]
    pub instance: Option<String>,
    /// Write the CSV here instead of to standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Start with a UTF-8 byte order mark, for spreadsheets on Windows.
    #[arg(long)]
    pub bom: bool,
    /// Also write a JSON manifest: filter, seq range, row count, head, the file's SHA-256.
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// Also write each row's offline proof (C2SP tlog-proof) in the trail's latest signed
    /// checkpoint to this file, one after the other, and put the checkpoint in the manifest:
    /// `verify --csv --checkpoint` then proves every row without the database, and each proof
    /// proves its row alone (`verify --proof`). Needs --db and --manifest.
    #[arg(long, requires = "manifest")]
    pub proofs: Option<PathBuf>,
    /// Export one node's events from the fleet store (`postgres://…`) instead, with --node: the
    /// same CSV and manifest as from its own trail.
    #[arg(long, conflicts_with_all = ["db", "server", "proofs"], requires = "node")]
    pub postgres: Option<String>,
    /// With --postgres: the node.
    #[arg(long, requires = "postgres")]
    pub node: Option<String>,
    /// Sign the manifest with this key (`toolgate keygen`; the log's checkpoint key, so that
    /// auditors check it with the --key they already hold).
    #[arg(long, requires = "manifest")]
    pub sign_key: Option<PathBuf>,
}

/// What an export wrote, for the manifest.
struct Written {
    rows: u64,
    first_seq: Option<i64>,
    last_seq: Option<i64>,
    sha256: String,
    /// With proofs: the checkpoint they lead to, and the proofs file's SHA-256.
    proofs: Option<(String, String)>,
}

/// Exports the matching events.
pub async fn export(args: ExportArgs) -> anyhow::Result<Exit> {
    let filter = args.filter.filter()?;
    let csv_only = args.bom || args.manifest.is_some() || args.postgres.is_some();
    if args.format != Format::Csv && csv_only {
        anyhow::bail!("--bom, --manifest, --proofs and --postgres are for --format csv");
    }
    // The proofs are computed from the trail's own tree: a server's export stream carries
    // none, so `--proofs` without `--db` is refused rather than quietly left unwritten.
    if args.proofs.is_some() && args.source.db.is_none() {
        anyhow::bail!("--proofs needs --db (the trail's file)");
    }
    let out: Box<dyn Write + Send> = match &args.output {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).with_context(|| format!("cannot create `{}`", path.display()))?,
        )),
        None => Box::new(BufWriter::new(super::Stdout)),
    };
    let signer = match &args.sign_key {
        Some(path) => Some(
            NoteSigner::parse(
                &std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read `{}`", path.display()))?,
            )
            .context("--sign-key")?,
        ),
        None => None,
    };
    if args.format != Format::Csv {
        return lines(args, filter, out).await;
    }
    let exported_at = Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true);
    let (written, head) = csv(&args, &filter, out).await?;
    if let Some(path) = &args.manifest {
        write_manifest(path, &args, (filter, &written, head), exported_at, signer.as_ref())?;
    }
    let range = match (written.first_seq, written.last_seq) {
        (Some(first), Some(last)) => format!(" (seq {first}–{last})"),
        _ => String::new(),
    };
    let mut also = Vec::new();
    also.extend(args.manifest.iter().map(|path| format!("the manifest to {}", path.display())));
    also.extend(args.proofs.iter().map(|path| format!("the proofs to {}", path.display())));
    summarize(args.output.as_deref(), written.rows, &range, &also);
    Ok(Exit::Ok)
}

/// A CSV export: from the fleet store (`--postgres`), the trail's file (with its proofs when
/// asked), or a server. What was written, and the trail's head (seq and hash) when it began.
async fn csv(
    args: &ExportArgs,
    filter: &Filter,
    out: Box<dyn Write + Send>,
) -> anyhow::Result<(Written, Option<(i64, String)>)> {
    Ok(if let (Some(url), Some(node)) = (&args.postgres, &args.node) {
        let url = &super::args::postgres_url(url).to_owned();
        super::args::check_node(node)?;
        let store = FleetStore::connect(url).await?;
        let (seq, hash) = store.head(node).await?;
        let head = hash.map(|hash| (seq, hash));
        let origin = Origin { trails: std::sync::Arc::new(store), node: node.clone() };
        let mut export = Export::new(out, filter.clone(), args.bom)?;
        while export.next_page(origin.clone()).await? {}
        let (rows, first_seq, last_seq) = (export.rows, export.first_seq, export.last_seq);
        let Finished { mut out, sha256, .. } = export.finish()?;
        out.flush()?;
        (Written { rows, first_seq, last_seq, sha256, proofs: None }, head)
    } else {
        match args.source.open().await? {
            Source::Db(trail) => {
                let reader = trail.reader();
                let head = reader.head().await?.map(|h| (h.seq, h.hash));
                let progress = ProgressBar::new(reader.count(filter).await?);
                let mut export = Export::new(out, filter.clone(), args.bom)?;
                let mut checkpoint = None;
                if let Some(path) = &args.proofs {
                    let (note, size) = latest_checkpoint(reader).await?;
                    let file = File::create(path)
                        .with_context(|| format!("cannot create `{}`", path.display()))?;
                    export = export.with_proofs(Box::new(BufWriter::new(file)), note.clone(), size);
                    checkpoint = Some(note);
                }
                while export.next_page(&trail).await? {
                    progress.set_position(export.rows);
                }
                progress.finish_and_clear();
                let (rows, first_seq, last_seq) = (export.rows, export.first_seq, export.last_seq);
                let Finished { mut out, sha256, proofs_sha256 } = export.finish()?;
                out.flush()?;
                let proofs = checkpoint.zip(proofs_sha256);
                (Written { rows, first_seq, last_seq, sha256, proofs }, head)
            }
            Source::Server(mut client) => {
                let head =
                    client.head(proto::HeadRequest { node_id: String::new() }).await?.into_inner();
                let head = (head.seq > 0).then_some((head.seq as i64, head.hash));
                let request =
                    proto::ExportRequest { filter: Some(filter.to_proto()), bom: args.bom };
                let written = receive(&mut client, request, out).await?;
                (written, head)
            }
        }
    })
}

/// Writes the export's manifest to `path`, signed when a key was given.
fn write_manifest(
    path: &std::path::Path,
    args: &ExportArgs,
    (filter, written, head): (Filter, &Written, Option<(i64, String)>),
    exported_at: String,
    signer: Option<&NoteSigner>,
) -> anyhow::Result<()> {
    let (checkpoint, proofs_sha256) = written.proofs.clone().unzip();
    let proofs_file = args.proofs.as_ref().and_then(|p| p.file_name());
    let mut manifest = Manifest {
        format: MANIFEST_FORMAT.to_owned(),
        filter,
        first_seq: written.first_seq,
        last_seq: written.last_seq,
        rows: written.rows,
        head_seq: head.as_ref().map(|(seq, _)| *seq),
        head_hash: head.map(|(_, hash)| hash),
        csv_sha256: written.sha256.clone(),
        bom: args.bom,
        exported_at,
        checkpoint,
        proofs_file: proofs_file.map(|name| name.to_string_lossy().into_owned()),
        proofs_sha256,
        signature: None,
    };
    if let Some(signer) = signer {
        manifest.sign(signer)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&manifest)? + "\n")
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
}

/// Says on stderr what an export wrote to a file (to standard output it says nothing, so that
/// a pipe gets the rows alone).
fn summarize(output: Option<&std::path::Path>, rows: u64, range: &str, also: &[String]) {
    let Some(path) = output else { return };
    let mut said = format!("exported {rows} events{range} to {}", path.display());
    for more in also {
        said.push_str(", ");
        said.push_str(more);
    }
    eprintln!("{said}");
}

/// Writes the matching events one per line, as JSON lines or OCSF events.
async fn lines(
    args: ExportArgs,
    filter: crate::trail::Filter,
    mut out: Box<dyn Write + Send>,
) -> anyhow::Result<Exit> {
    let instance = args.instance.clone().unwrap_or_else(crate::siem::host_name);
    let mut source = args.source.open().await?;
    let (mut after, mut rows) = (0, 0u64);
    let progress = ProgressBar::new_spinner();
    loop {
        let page = source.page(&filter, after, PAGE).await?;
        for event in &page {
            let line = match args.format {
                Format::Ocsf => serde_json::to_string(&crate::siem::ocsf::event(event, &instance))?,
                Format::Jsonl | Format::Csv => serde_json::to_string(event)?,
            };
            writeln!(out, "{line}")?;
            after = event.seq;
        }
        rows += page.len() as u64;
        progress.set_position(rows);
        if page.len() < PAGE as usize {
            break;
        }
    }
    progress.finish_and_clear();
    out.flush()?;
    summarize(args.output.as_deref(), rows, "", &[]);
    Ok(Exit::Ok)
}

/// Streams an export from a server into `out`, checking the server's hash of it.
async fn receive(
    client: &mut proto::audit_client::AuditClient<super::remote::Authorized>,
    request: proto::ExportRequest,
    mut out: Box<dyn Write + Send>,
) -> anyhow::Result<Written> {
    let mut stream = client.export_csv(request).await?.into_inner();
    let mut hasher = Sha256::new();
    let progress = ProgressBar::new_spinner();
    let mut summary = None;
    while let Some(chunk) = stream.message().await? {
        hasher.update(&chunk.data);
        out.write_all(&chunk.data)?;
        progress.inc(1);
        summary = chunk.summary.or(summary);
    }
    progress.finish_and_clear();
    out.flush()?;
    let summary = summary.context("the server's export ended without its summary")?;
    let sha256 = hex::encode(hasher.finalize());
    anyhow::ensure!(
        sha256 == summary.csv_sha256,
        "the export was damaged on its way: its hash differs from the server's"
    );
    let seq = |n: u64| (summary.rows > 0).then_some(n as i64);
    Ok(Written {
        rows: summary.rows,
        first_seq: seq(summary.first_seq),
        last_seq: seq(summary.last_seq),
        sha256,
        proofs: None,
    })
}

/// The trail's latest checkpoint, with its cosignatures, and the tree size it covers.
async fn latest_checkpoint(reader: &Reader) -> anyhow::Result<(String, u64)> {
    let event = reader
        .last_checkpoint()
        .await?
        .context("--proofs: the trail has no checkpoint (is [checkpoints] configured?)")?;
    let note = reader.cosigned_note(&event).await?;
    let size = Checkpoint::read(&note)?.size;
    Ok((note, size))
}
