//! `toolgate tail`: the trail's latest events, one line each (or JSON lines), and with
//! `--follow` each new one as it commits: through a server's `Audit/Subscribe`, or by reading
//! a local trail again every half second. A server's stream that ends is taken up again.

use std::time::Duration;

use clap::Args;
use tokio_stream::StreamExt;

use super::Exit;
use super::args::{FilterArgs, Source, SourceArgs};
use super::query::row;
use crate::audit::Trails;
use crate::proto;
use crate::request::WireFilter;
use crate::store::PAGE;
use crate::trail::Event;
use crate::wire::event_from_proto;

/// How often a local trail is read again with --follow.
const LOOK_AGAIN: Duration = Duration::from_millis(500);
/// How long to wait before subscribing again to a server whose stream ended.
const RECONNECT: Duration = Duration::from_secs(1);

/// Arguments of `toolgate tail`.
#[derive(Debug, Args)]
pub struct TailArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Keep going: print each new event as it commits, until interrupted.
    #[arg(long, short)]
    pub follow: bool,
    /// Start at this seq; by default, with the trail's last 20 events (those that match).
    #[arg(long)]
    pub from_seq: Option<u64>,
    /// One JSON object per line, with every stored field.
    #[arg(long)]
    pub json: bool,
}

/// Prints the events, then follows the trail if asked.
pub async fn tail(args: TailArgs) -> anyhow::Result<Exit> {
    let filter = args.filter.filter()?;
    let mut source = args.source.open().await?;
    let from = match args.from_seq {
        Some(from) => from,
        None => head(&mut source).await?.saturating_sub(19).max(1),
    };
    let print = |event: &Event| -> anyhow::Result<()> {
        match args.json {
            true => println!("{}", crate::text::json_escaped(&serde_json::to_string(event)?)),
            // One line an event, as a stream reader expects (the table's whole reason and shadow
            // answer are `query`'s, and `--json`'s).
            false => println!("{}", row(event).cells.join("  ")),
        }
        Ok(())
    };
    match (&mut source, args.follow) {
        (Source::Server(client), true) => {
            // A stream that ends (the server restarted) is taken up again after the last seq.
            let mut from = from;
            loop {
                let request =
                    proto::SubscribeRequest { from_seq: from, filter: Some(filter.to_proto()) };
                if let Ok(answer) = client.subscribe(request).await {
                    let mut events = answer.into_inner();
                    while let Some(Ok(event)) = events.next().await {
                        let event = event_from_proto(event)?;
                        print(&event)?;
                        from = event.seq.unsigned_abs() + 1;
                    }
                }
                tokio::time::sleep(RECONNECT).await;
            }
        }
        (source, follow) => {
            let mut after = i64::try_from(from)?.saturating_sub(1);
            loop {
                let page = source.page(&filter, after, PAGE).await?;
                let full = page.len() == PAGE as usize;
                for event in &page {
                    print(event)?;
                    after = event.seq;
                }
                match (full, follow) {
                    (true, _) => {}
                    (false, true) => tokio::time::sleep(LOOK_AGAIN).await,
                    (false, false) => break,
                }
            }
        }
    }
    Ok(Exit::Ok)
}

/// The seq of the trail's last event (0 when empty).
async fn head(source: &mut Source) -> anyhow::Result<u64> {
    Ok(match source {
        Source::Db(trail) => trail.head("").await?.map_or(0, |h| h.seq.unsigned_abs()),
        Source::Server(client) => {
            client.head(proto::HeadRequest::default()).await?.into_inner().seq
        }
    })
}
