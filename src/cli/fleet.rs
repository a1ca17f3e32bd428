//! `toolgate fleet`: the operator's side of the fleet store (docs/fleet.md): apply its schema,
//! register and revoke nodes, and see where every node stands.

use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};

use std::collections::BTreeMap;

use super::Exit;
use crate::fleet::URL_ENV;
use crate::fleet::store::{Alarms, FleetStore, NodeStatus};
use crate::retention::fleet::{Round, Rules, Step, prune as prune_round};
use crate::text::escaped;
use crate::trail::note::NoteVerifier;

/// The store to talk to.
#[derive(Debug, Args)]
pub struct PostgresArgs {
    /// The fleet store, `postgres://user@host:port/db` (the password in the URL only through
    /// the environment, or in PGPASSWORD).
    #[arg(long = "postgres", env = URL_ENV, hide_env_values = true)]
    pub url: String,
}

/// Arguments of `toolgate fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub command: FleetCommand,
}

/// The fleet's subcommands.
#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// Create or update the store's schema (as the role that is to own it).
    Migrate(PostgresArgs),
    /// Register a node with its checkpoint key, and print the token it ships with (on stdout,
    /// alone: the store keeps only its hash).
    Register(RegisterArgs),
    /// Revoke a node's token: the ingest service refuses it from its next batch on.
    Revoke(NodeArgs),
    /// One line per node: last seq and when it arrived, lag, last checkpoint, alarms.
    Status(PostgresArgs),
    /// The calls the ingest service refused, with the node, shipper, peer, seq and what
    /// differed: the last --limit of them.
    Alarms(AlarmsArgs),
    /// Record where a node archives its trail (its `[archive] url` and options): `fleet
    /// prune` drops its events only once it finds them there.
    Archive(NodeArchiveArgs),
    /// Set a legal hold, which stops every `fleet prune`, or release it (--release). Every
    /// change is kept.
    Hold(HoldArgs),
    /// Drop the store's oldest partitions once they take no event younger than
    /// --max-age-days, and only when every node's events in them are verified in the store,
    /// covered by a signed checkpoint it keeps and held exactly by the node's archive; each
    /// drop recorded. Run as the store's owner.
    Prune(PruneArgs),
}

/// Arguments of `toolgate fleet archive`.
#[derive(Debug, Args)]
pub struct NodeArchiveArgs {
    #[command(flatten)]
    pub postgres: PostgresArgs,
    /// The node's id.
    #[arg(long)]
    pub node: String,
    /// The node's archive, as its `[archive] url` names it (`s3://bucket/prefix`,
    /// `file:///…`).
    #[arg(long = "url")]
    pub location: String,
    /// An option of the archive's store, `name=value` as `[archive] options` (repeatable;
    /// never a secret: credentials come from the environment of `fleet prune`).
    #[arg(long = "option", value_parser = super::archive::option)]
    pub options: Vec<(String, String)>,
}

/// Arguments of `toolgate fleet hold`.
#[derive(Debug, Args)]
pub struct HoldArgs {
    #[command(flatten)]
    pub postgres: PostgresArgs,
    /// Why (a case, a ticket): kept with the change.
    #[arg(long)]
    pub reason: String,
    /// Release the hold instead of setting it.
    #[arg(long)]
    pub release: bool,
}

/// Arguments of `toolgate fleet prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    #[command(flatten)]
    pub postgres: PostgresArgs,
    /// Drop a partition once the newest event it can take arrived at least this many days ago
    /// (a fraction is allowed).
    #[arg(long)]
    pub max_age_days: f64,
    /// A witness's cosignature verifier key: the checkpoint that covers a node's dropped
    /// events must carry its valid cosignature. Repeatable.
    #[arg(long)]
    pub witness: Vec<String>,
    /// How many of the --witness keys must have cosigned it (k of n); all of them when absent.
    #[arg(long, requires = "witness")]
    pub witnesses_required: Option<usize>,
    /// Say what would be dropped, and drop nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `toolgate fleet register`.
#[derive(Debug, Args)]
pub struct RegisterArgs {
    #[command(flatten)]
    pub postgres: PostgresArgs,
    /// The node's id (its `[fleet] node_id`).
    #[arg(long)]
    pub node: String,
    /// The node's checkpoint verifier key (`toolgate keygen` printed it): its checkpoints are
    /// checked against it on arrival, and by `verify --postgres`.
    #[arg(long)]
    pub key: Option<String>,
    /// Issue a registered node a new token (the old one stops working; a revocation is
    /// lifted), keeping its key unless --key is given.
    #[arg(long)]
    pub reissue: bool,
}

/// Arguments of `toolgate fleet alarms`.
#[derive(Debug, Args)]
pub struct AlarmsArgs {
    #[command(flatten)]
    pub postgres: PostgresArgs,
    /// Show the last this many (a node can make many alarms; they are counted all the same).
    #[arg(long, default_value_t = 1000)]
    pub limit: u32,
}

/// Arguments naming one node.
#[derive(Debug, Args)]
pub struct NodeArgs {
    #[command(flatten)]
    pub postgres: PostgresArgs,
    /// The node's id.
    #[arg(long)]
    pub node: String,
}

/// Runs a fleet subcommand.
pub async fn fleet(args: FleetArgs) -> anyhow::Result<Exit> {
    match args.command {
        FleetCommand::Migrate(pg) => {
            let store = FleetStore::connect(&pg.url).await?;
            store.migrate().await?;
            println!("the fleet store's schema is up to date");
        }
        FleetCommand::Register(args) => {
            super::args::check_node(&args.node)?;
            if let Some(key) = &args.key {
                NoteVerifier::parse(key).map_err(|e| anyhow::anyhow!("--key: {e}"))?;
            }
            let store = FleetStore::connect(super::args::postgres_url(&args.postgres.url)).await?;
            let key = args.key.as_deref();
            let token = if args.reissue {
                store.reissue(&args.node, key).await?
            } else {
                store.register(&args.node, key).await?
            };
            println!("{token}");
            eprintln!(
                "node {:?} registered: give it the token above ([fleet] token_file)",
                args.node
            );
        }
        FleetCommand::Revoke(args) => {
            super::args::check_node(&args.node)?;
            let store = FleetStore::connect(super::args::postgres_url(&args.postgres.url)).await?;
            store.revoke(&args.node).await?;
            println!("node {:?} revoked", args.node);
        }
        FleetCommand::Status(pg) => {
            let store = FleetStore::connect(&pg.url).await?;
            for node in store.nodes().await? {
                println!("{}", status_line(&node));
            }
        }
        FleetCommand::Alarms(args) => {
            let store = FleetStore::connect(super::args::postgres_url(&args.postgres.url)).await?;
            let Alarms { count, last: alarms } = store.alarms(args.limit).await?;
            let earlier = count - i64::try_from(alarms.len()).unwrap_or(i64::MAX);
            if earlier > 0 {
                println!("({earlier} earlier alarms not shown: --limit)");
            }
            for alarm in &alarms {
                let seq = alarm.seq.map_or_else(|| "-".to_owned(), |s| s.to_string());
                println!(
                    "ALARM {} node {:?} shipped by {:?} from {:?} seq {seq}: {:?}",
                    alarm.at,
                    alarm.node_id,
                    alarm.shipper.as_deref().unwrap_or("-"),
                    alarm.peer.as_deref().unwrap_or("-"),
                    alarm.what
                );
            }
            return Ok(if count == 0 { Exit::Ok } else { Exit::Found });
        }
        FleetCommand::Archive(args) => {
            super::args::check_node(&args.node)?;
            let options: BTreeMap<String, String> = args.options.into_iter().collect();
            // Refused here as `fleet prune` would refuse it: a bad URL, a secret among the
            // options.
            crate::archive::Archive::open(&args.location, &options)?;
            let options = (!options.is_empty()).then(|| serde_json::to_string(&options));
            let store = FleetStore::connect(super::args::postgres_url(&args.postgres.url)).await?;
            store.set_archive(&args.node, &args.location, options.transpose()?.as_deref()).await?;
            println!("node {:?} archives to {}", args.node, escaped(&args.location));
        }
        FleetCommand::Hold(args) => {
            let store = FleetStore::connect(super::args::postgres_url(&args.postgres.url)).await?;
            store.set_hold(!args.release, &args.reason).await?;
            println!("legal hold {}", if args.release { "released" } else { "set" });
        }
        FleetCommand::Prune(args) => return prune(args).await,
    }
    Ok(Exit::Ok)
}

/// `toolgate fleet prune`: one round, each partition's step on a line.
async fn prune(args: PruneArgs) -> anyhow::Result<Exit> {
    anyhow::ensure!(
        args.max_age_days.is_finite() && args.max_age_days >= 0.0,
        "--max-age-days is a number of days, 0 or more"
    );
    let witnesses = super::args::witnesses(&args.witness, args.witnesses_required)?;
    let rules = Rules { max_age_days: args.max_age_days, witnesses };
    let store = FleetStore::connect(super::args::postgres_url(&args.postgres.url)).await?;
    let steps = match prune_round(&store, &rules, args.dry_run).await? {
        Round::Held(hold) => {
            println!(
                "a legal hold is in force (set {} by {}: {}): nothing is dropped",
                hold.at,
                escaped(&hold.by),
                escaped(&hold.reason)
            );
            return Ok(Exit::Ok);
        }
        Round::Steps(steps) => steps,
    };
    if steps.is_empty() {
        println!("no partition is old enough to drop");
    }
    let mut exit = Exit::Ok;
    for step in &steps {
        let (partition, cuts, verb) = match step {
            Step::Dropped(partition, cuts) => (partition, cuts, "dropped"),
            Step::Droppable(partition, cuts) => (partition, cuts, "would drop"),
            Step::Kept(partition, why) => {
                println!("kept {}: {}", partition.name, escaped(why));
                exit = Exit::Found;
                continue;
            }
        };
        println!(
            "{verb} {} (events that arrived before {})",
            partition.name,
            partition.to.as_deref().unwrap_or("-")
        );
        for cut in cuts {
            println!(
                "  node {:?}: seq {}–{}, covered by the checkpoint at seq {}, verified in {}",
                cut.node_id,
                cut.first,
                cut.through,
                cut.checkpoint,
                escaped(&cut.archive)
            );
        }
    }
    Ok(exit)
}

/// One node's line of `fleet status`. Ids, roles and times come from the store (the node
/// wrote the times): printed escaped.
fn status_line(node: &NodeStatus) -> String {
    let dash = |n: Option<i64>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
    // How long the last event took from the node to the store.
    let lag = match (&node.last_ts, &node.last_received) {
        (Some(ts), Some(received)) => match (parse_time(ts), parse_time(received)) {
            (Some(ts), Some(received)) => {
                format!("{:.3}s", (received - ts).as_seconds_f64().max(0.0))
            }
            _ => "-".to_owned(),
        },
        _ => "-".to_owned(),
    };
    let witnessed = match node.cosigned_size {
        Some(size) => format!(
            "size {size} by {} witness(es), {} events since",
            node.witnesses,
            (node.last_seq - size).max(0)
        ),
        None => "-".to_owned(),
    };
    format!(
        "node {:?}{} last seq {} received {:?} lag {lag} checkpoint {} witnessed {witnessed} alarms {}",
        node.node_id,
        if node.revoked { " REVOKED" } else { "" },
        node.last_seq,
        node.last_received.as_deref().unwrap_or("-"),
        dash(node.last_checkpoint),
        node.alarms,
    )
}

fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.with_timezone(&Utc))
}
