//! `toolgate stats`: the compliance summary, counts by outcome, tool, actor and kind.

use clap::Args;

use super::Exit;
use super::args::{Source, SourceArgs};
use crate::audit::Trails;
use crate::fleet::store::FleetStore;
use crate::proto;
use crate::query::Stats;
use crate::request::WireFilter;
use crate::trail::Filter;

/// Arguments of `toolgate stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// At or after this time: RFC 3339, or a duration back from now (`24h`, `7d`).
    #[arg(long)]
    pub since: Option<String>,
    /// Before this time, in the same forms.
    #[arg(long)]
    pub until: Option<String>,
    /// One JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Count the fleet store's events (`postgres://…`) instead: every node's, or one's.
    #[arg(long, conflicts_with_all = ["db", "server"])]
    pub postgres: Option<String>,
    /// With --postgres: only this node. With --server: only this node of a fleet server
    /// (`serve --audit-only`).
    #[arg(long)]
    pub node: Option<String>,
}

/// Prints the counts.
pub async fn stats(args: StatsArgs) -> anyhow::Result<Exit> {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let range = Filter::time_range(&text(&args.since), &text(&args.until), "--")?;
    let (since, until) = (range.since.clone(), range.until.clone());
    anyhow::ensure!(
        args.node.is_none() || args.postgres.is_some() || args.source.server.is_some(),
        "--node needs --postgres or --server"
    );
    if let Some(node) = &args.node {
        super::args::check_node(node)?;
    }
    let stats = if let Some(url) = args.postgres.as_deref().map(super::args::postgres_url) {
        let store = FleetStore::connect(url).await?;
        Trails::stats(&store, args.node.as_deref(), &range).await?
    } else {
        match args.source.open().await? {
            Source::Db(trail) => trail.stats(None, &range).await?,
            Source::Server(mut client) => {
                let request = proto::StatsRequest {
                    since: text(&since),
                    until: text(&until),
                    node_id: args.node.clone().unwrap_or_default(),
                };
                let s = client.stats(request).await?.into_inner();
                let counts =
                    |list: Vec<proto::Count>| list.into_iter().map(|c| (c.key, c.count)).collect();
                Stats {
                    total: s.total,
                    by_outcome: counts(s.by_outcome),
                    by_tool: counts(s.by_tool),
                    by_actor: counts(s.by_actor),
                    by_kind: counts(s.by_kind),
                }
            }
        }
    };
    // What each count counts: the outcomes are the decisions'; tools and actors count every
    // event that names one (a call's decision, execution and approval steps alike).
    let sections = [
        ("outcome", "decisions", &stats.by_outcome),
        ("tool", "events", &stats.by_tool),
        ("actor", "events", &stats.by_actor),
        ("kind", "events", &stats.by_kind),
    ];
    if args.json {
        let mut object =
            serde_json::json!({ "since": since, "until": until, "total": stats.total });
        for (name, _, counts) in sections {
            object[format!("by_{name}")] =
                counts.iter().map(|(k, n)| (k.clone(), serde_json::json!(n))).collect();
        }
        println!("{}", crate::text::json_escaped(&object.to_string()));
        return Ok(Exit::Ok);
    }
    let kind = |name: &str| stats.by_kind.iter().find(|(k, _)| k == name).map_or(0, |(_, n)| *n);
    println!(
        "events: {} (decisions: {}, executions: {})",
        stats.total,
        kind("decision"),
        kind("execution")
    );
    for (name, counted, counts) in sections {
        println!("\nby {name} ({counted}):");
        let counts: Vec<(String, _)> =
            counts.iter().map(|(key, count)| (crate::text::escaped(key), count)).collect();
        let width = counts.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
        for (key, count) in counts {
            println!("  {key:<width$}  {count}");
        }
    }
    Ok(Exit::Ok)
}
