//! `toolgate archive`: what an archive holds, and its verification without the trail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};

use super::Exit;
use crate::archive::{Archive, check, tiles};
use crate::store::Reader;
use crate::text::escaped;
use crate::trail::checkpoint::Checkpoint;
use crate::trail::csv::CsvWriter;
use crate::trail::note::NoteVerifier;

/// Arguments of `toolgate archive`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    #[command(subcommand)]
    pub command: ArchiveCommand,
}

/// Where the archive is.
#[derive(Debug, Args)]
pub struct Location {
    /// The archive: `file:///path`, `s3://bucket/prefix`.
    #[arg(long)]
    pub url: String,
    /// An option of the store, `name=value` as `[archive] options` (repeatable).
    #[arg(long = "option", value_parser = option)]
    pub options: Vec<(String, String)>,
}

pub(super) fn option(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once('=').ok_or("give name=value")?;
    Ok((name.to_owned(), value.to_owned()))
}

impl Location {
    fn open(&self) -> anyhow::Result<Archive> {
        open(&self.url, &self.options)
    }
}

/// The archive at `url` with the store's `options` as the command line gives them.
pub(super) fn open(url: &str, options: &[(String, String)]) -> anyhow::Result<Archive> {
    let options: BTreeMap<String, String> = options.iter().cloned().collect();
    Ok(Archive::open(url, &options)?)
}

/// The `archive` subcommands.
#[derive(Debug, Subcommand)]
pub enum ArchiveCommand {
    /// Print the archive's checkpoint: its origin, how many events it proves, its root.
    List(Location),
    /// Verify the archive without the trail: the checkpoint's signature, every tile and
    /// bundle against the tree, every event against its leaf and the chain; and that the
    /// archive is not behind the newest checkpoint given (`--db`, `--checkpoint`): an older
    /// checkpoint of the same log, swapped in, proves an older, shorter archive just as well.
    /// Without either, it says that it verified only what the archive shows (exit 1).
    Verify {
        #[command(flatten)]
        location: Location,
        /// The log's verifier key (`toolgate keygen` printed it).
        #[arg(long)]
        key: String,
        /// A checkpoint of the log kept elsewhere (a witness's, an earlier `toolgate
        /// checkpoint`), signed by `--key`: the archive must reach it.
        #[arg(long)]
        checkpoint: Vec<PathBuf>,
        /// The trail the archive is of: its last checkpoint, which the archive must reach.
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Print the archived events `--from` through `--to` as a CSV export (header first), as
    /// the archive holds them: `toolgate verify --csv` checks their chain, `archive verify`
    /// proves them against the signed checkpoint.
    Get {
        #[command(flatten)]
        location: Location,
        /// The first seq.
        #[arg(long, default_value_t = 1)]
        from: u64,
        /// The last seq; the archive's last when absent.
        #[arg(long)]
        to: Option<u64>,
    },
}

/// Runs `toolgate archive`: exit 0 when it verifies, 1 when it does not (or has no checkpoint
/// to list), 2 for trouble.
pub async fn archive(args: ArchiveArgs) -> anyhow::Result<Exit> {
    match args.command {
        ArchiveCommand::List(location) => {
            let archive = location.open()?;
            let Some(note) = archive.get("checkpoint").await? else {
                eprintln!("the archive holds no checkpoint");
                return Ok(Exit::Found);
            };
            let checkpoint = Checkpoint::read(&String::from_utf8_lossy(&note))
                .context("the archive's checkpoint does not read")?;
            println!("origin {}", escaped(&checkpoint.origin));
            println!("events 1 through {}", checkpoint.size);
            println!("root {}", hex::encode(checkpoint.root));
            Ok(Exit::Ok)
        }
        ArchiveCommand::Get { location, from, to } => get(&location.open()?, from, to).await,
        ArchiveCommand::Verify { location, key, checkpoint, db } => {
            let key = NoteVerifier::parse(&key).with_context(|| format!("--key `{key}`"))?;
            let newest = newest_anchor(&key, &checkpoint, db.as_deref()).await?;
            let archive = location.open()?;
            // Against an anchor smaller than the archive, the tree of its size is found too.
            let at = newest.as_ref().map(|(checkpoint, _)| checkpoint.size);
            let mut found = check::verify(&archive, &key, at).await?;
            if let Some((anchor, source)) = &newest {
                found.problems.extend(reaches(&found, anchor, source));
            }
            for problem in &found.problems {
                println!("{}", escaped(problem));
            }
            match (found.problems.is_empty(), newest) {
                (false, _) => {
                    let (count, events) = (found.problems.len(), found.events);
                    println!("broken: {count} problems in {events} events");
                    Ok(Exit::Found)
                }
                (true, Some((_, source))) => {
                    let (events, size) = (found.events, found.size);
                    println!(
                        "ok: {events} events, proven by the checkpoint of size {size}, which \
                         reaches {source}"
                    );
                    Ok(Exit::Ok)
                }
                (true, None) => {
                    let (events, size) = (found.events, found.size);
                    println!(
                        "unanchored: {events} events proven by the archive's own checkpoint of \
                         size {size} only; an older checkpoint of the log swapped in would prove \
                         an older archive as well: give --db or --checkpoint to know it is whole"
                    );
                    Ok(Exit::Found)
                }
            }
        }
    }
}

/// The newest of the checkpoints given (files, and the trail's last), each opened with `key`,
/// and where it came from.
async fn newest_anchor(
    key: &NoteVerifier,
    files: &[PathBuf],
    db: Option<&Path>,
) -> anyhow::Result<Option<(Checkpoint, String)>> {
    let mut anchors = Vec::new();
    for path in files {
        let note = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read `{}`", path.display()))?;
        let checkpoint = Checkpoint::open(&note, key)
            .with_context(|| format!("`{}` is not a checkpoint signed by --key", path.display()))?;
        anchors.push((checkpoint, format!("`{}`", path.display())));
    }
    if let Some(db) = db {
        let reader = Reader::open(db).await?;
        let last = match reader.last_checkpoint().await? {
            Some(event) => Some(reader.cosigned_note(&event).await?),
            None => None,
        };
        reader.close().await;
        if let Some(note) = last {
            let checkpoint = Checkpoint::open(&note, key)
                .context("the trail's last checkpoint is not signed by --key")?;
            anchors.push((checkpoint, format!("the trail's last checkpoint ({})", db.display())));
        }
    }
    Ok(anchors.into_iter().max_by_key(|(checkpoint, _)| checkpoint.size))
}

/// What keeps the archive `found` from reaching `anchor` (a checkpoint of the same log, from
/// `source`): a smaller tree, or another root at the anchor's size.
fn reaches(found: &check::Found, anchor: &Checkpoint, source: &str) -> Option<String> {
    if found.size == 0 || anchor.size == 0 {
        return None;
    }
    if found.size < anchor.size {
        return Some(format!(
            "archive: its checkpoint proves {} events, but {source} proves {}: the archive is \
             rolled back or behind",
            found.size, anchor.size
        ));
    }
    match found.at {
        Some((root, _)) if root == anchor.root => None,
        _ => Some(format!(
            "archive: its tree of {} events has another root than {source}: another history",
            anchor.size
        )),
    }
}

/// `archive get`: the rows of the events objects that hold `from` through `to`, each read and
/// written again (so that what is printed is an export's CSV, whatever an object holds).
async fn get(archive: &Archive, from: u64, to: Option<u64>) -> anyhow::Result<Exit> {
    let Some(note) = archive.get("checkpoint").await? else {
        eprintln!("the archive holds no checkpoint");
        return Ok(Exit::Found);
    };
    let size = Checkpoint::read(&String::from_utf8_lossy(&note))
        .context("the archive's checkpoint does not read")?
        .size;
    let to = to.unwrap_or(size).min(size);
    let mut out = CsvWriter::new(super::Stdout, false)?;
    let wanted = |seq: i64| (from..=to).contains(&seq.unsigned_abs()) && seq > 0;
    let tiles = tiles::at_level(size, 0).filter(|t| t.first() + t.width >= from && t.first() < to);
    for tile in tiles {
        let path = tile.events_path();
        let bytes = archive.get(&path).await?.with_context(|| format!("{path}: missing"))?;
        let rows =
            check::rows_of(&bytes, tile.width).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        for (i, row) in rows.into_iter().enumerate() {
            let event = row.map_err(|e| anyhow::anyhow!("{path}: row {}: {e}", i + 1))?;
            if wanted(event.seq) {
                out.write(&event)?;
            }
        }
    }
    out.finish()?;
    Ok(Exit::Ok)
}
