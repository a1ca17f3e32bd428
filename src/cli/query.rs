//! `toolgate query`: the events that match a filter, as an aligned table or JSON lines.

use clap::Args;

use super::Exit;
use super::args::{FilterArgs, SourceArgs};
use crate::fleet::store::FleetStore;
use crate::store::PAGE;
use crate::trail::Event;

/// Arguments of `toolgate query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// One JSON object per line, with every stored field, instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Most events to print; when more match, a line on stderr says how to get the rest.
    #[arg(long, default_value_t = 1000)]
    pub limit: u64,
    /// The newest events first (the default is oldest first).
    #[arg(long, conflicts_with = "postgres")]
    pub newest_first: bool,
    /// Start after this seq (oldest first), or with --newest-first before it: where a page
    /// cut by --limit left off.
    #[arg(long, conflicts_with = "postgres")]
    pub from: Option<i64>,
    /// Read the fleet store (`postgres://…`) instead: every node's events, in (node, seq)
    /// order, each with its `node_id`.
    #[arg(long, conflicts_with_all = ["db", "server"])]
    pub postgres: Option<String>,
    /// With --postgres: only this node.
    #[arg(long, requires = "postgres")]
    pub node: Option<String>,
}

/// Prints the matching events in `seq` order (or the newest first).
pub async fn query(args: QueryArgs) -> anyhow::Result<Exit> {
    let filter = args.filter.filter()?;
    if let Some(url) = args.postgres.as_deref().map(super::args::postgres_url) {
        return fleet(url, args.node.as_deref(), &filter, args.json, args.limit).await;
    }
    let mut source = args.source.open().await?;
    let mut table = Vec::new();
    let newest_first = args.newest_first;
    let (mut printed, mut at) = (0u64, args.from.unwrap_or(0));
    // Whether the pages ran out before the limit did.
    let mut ended = false;
    while printed < args.limit {
        let want = u32::try_from(args.limit - printed).unwrap_or(PAGE).min(PAGE);
        let page = source.page_from(&filter, at, want, newest_first).await?;
        let Some(last) = page.last() else {
            ended = true;
            break;
        };
        at = last.seq;
        printed += page.len() as u64;
        let short = page.len() < want as usize;
        ended = short;
        if args.json {
            for event in &page {
                println!("{}", serde_json::to_string(event)?);
            }
        } else {
            table.extend(page);
        }
        if short {
            break;
        }
    }
    if !args.json {
        print_table(&table);
    }
    // A page cut by the limit says so, and where the rest starts, unless nothing is left.
    let more = !ended && !source.page_from(&filter, at, 1, newest_first).await?.is_empty();
    if more {
        let order = if newest_first { " --newest-first" } else { "" };
        eprintln!(
            "toolgate query: stopped at --limit {}; more events match: add{order} --from {at} for the next page",
            args.limit
        );
    }
    Ok(Exit::Ok)
}

/// The fleet store's events, with their nodes.
async fn fleet(
    url: &str,
    node: Option<&str>,
    filter: &crate::trail::Filter,
    json: bool,
    limit: u64,
) -> anyhow::Result<Exit> {
    if let Some(node) = node {
        super::args::check_node(node)?;
    }
    let store = FleetStore::connect(url).await?;
    let (mut printed, mut after) = (0u64, (String::new(), 0));
    let mut table = Vec::new();
    while printed < limit {
        let want = u32::try_from(limit - printed).unwrap_or(PAGE).min(PAGE);
        let page = store.query(node, filter, (&after.0, after.1), want).await?;
        let Some((last_node, last)) = page.last() else { break };
        after = (last_node.clone(), last.seq);
        printed += page.len() as u64;
        let short = page.len() < want as usize;
        for (node_id, event) in page {
            if json {
                let mut value = serde_json::to_value(&event)?;
                value["node_id"] = node_id.into();
                println!("{}", crate::text::json_escaped(&value.to_string()));
            } else {
                let mut row = row(&event);
                row.cells[0] = format!("{}:{}", crate::text::escaped(&node_id), event.seq);
                table.push(row);
            }
        }
        if short {
            break;
        }
    }
    if !json {
        print_rows(&table);
    }
    if printed >= limit {
        eprintln!(
            "toolgate query: stopped at --limit {limit}; more events may match: raise --limit or narrow the filter (--node, --since)"
        );
    }
    Ok(Exit::Ok)
}

const HEADERS: [&str; 12] = [
    "seq", "ts", "kind", "session", "actor", "tool", "action", "outcome", "policies", "detail",
    "us", "bytes",
];

fn print_table(events: &[Event]) {
    print_rows(&events.iter().map(row).collect::<Vec<_>>());
}

/// An event as the table shows it: its cells, and below them the lines the cells cut short
/// (the whole reason) or leave out (the shadow policy's answer).
pub(super) struct Row {
    pub cells: [String; 12],
    pub more: Vec<String>,
}

fn print_rows(rows: &[Row]) {
    let mut widths = HEADERS.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(&row.cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 12]| {
        let padded: Vec<String> =
            cells.iter().zip(widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(&HEADERS.map(str::to_owned));
    for row in rows {
        line(&row.cells);
        for more in &row.more {
            println!("    {more}");
        }
    }
}

/// A decision's policy ids as the table shows them: `a,b` from the stored JSON array.
fn policies(ids: Option<&str>) -> Option<String> {
    let ids: Vec<String> = serde_json::from_str(ids?).ok()?;
    (!ids.is_empty()).then(|| ids.join(","))
}

pub(super) fn row(e: &Event) -> Row {
    let r = &e.record;
    let text = |v: &Option<String>| short(v.as_deref().unwrap_or("-"));
    let int = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |n| n.to_string());
    let detail = r.reason.as_ref().or(r.error.as_ref()).cloned();
    let mut more = Vec::new();
    if let Some(detail) = &detail
        && detail.chars().count() > SHORT
    {
        let said = if r.reason.is_some() { "reason" } else { "error" };
        more.push(format!("{said}: {}", crate::text::escaped(detail)));
    }
    if let Some(shadow) = r.shadow_outcome {
        let why = r.shadow_reason.as_deref().map(crate::text::escaped).unwrap_or_default();
        more.push(format!("shadow: {shadow}: {why}"));
    }
    let cells = [
        e.seq.to_string(),
        crate::text::escaped(&e.ts),
        r.kind.to_string(),
        text(&r.session_id),
        text(&r.actor_id),
        text(&r.tool),
        text(&r.action),
        text(&r.outcome.map(|o| o.to_string())),
        text(&policies(r.policy_ids.as_deref())),
        text(&detail),
        int(r.duration_us),
        int(r.result_bytes),
    ];
    Row { cells, more }
}

/// The most characters a cell shows.
const SHORT: usize = 48;

/// At most [`SHORT`] characters of a cell, on one line.
fn short(text: &str) -> String {
    let one_line = crate::text::escaped(text);
    match one_line.char_indices().nth(SHORT - 1) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}
