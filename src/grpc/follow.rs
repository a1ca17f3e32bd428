//! `Audit/Subscribe`: the trail followed as it grows. Events already on the trail are read a
//! page at a time from the requested seq; once caught up, the stream waits for the writer's
//! next commit, so a consumer sees each event once, in order, whatever it filters on.

use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tonic::Status;

use super::convert::event_to_proto;
use crate::proto;
use crate::store::{Filter, PAGE, Reader};

/// How long a follower waits before it looks again when no commit tells it to: only once the
/// writer has stopped, at shutdown.
const LOOK_AGAIN: Duration = Duration::from_secs(1);

/// What a follower waits on: the writer's commits, and the server's shutdown.
#[derive(Debug, Clone)]
pub struct Follow {
    pub commits: watch::Receiver<i64>,
    pub stopping: watch::Receiver<bool>,
}

/// Sends every event matching `filter` after seq `after` to `events`, then each one that
/// commits, until the receiver is gone or the server stops (even while a slow receiver has
/// the stream full).
pub async fn follow(
    reader: Reader,
    filter: Filter,
    after: i64,
    Follow { commits, mut stopping }: Follow,
    events: mpsc::Sender<Result<proto::Event, Status>>,
) {
    let stopped = async move {
        // A shutdown that no one can signal never comes: the grace period ends the stream.
        if stopping.wait_for(|stop| *stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = stream(reader, filter, after, commits, events) => {}
        () = stopped => {}
    }
}

async fn stream(
    reader: Reader,
    filter: Filter,
    mut after: i64,
    commits: watch::Receiver<i64>,
    events: mpsc::Sender<Result<proto::Event, Status>>,
) {
    let mut commits = Some(commits);
    loop {
        let page = match reader.query(&filter, after, PAGE).await {
            Ok(page) => page,
            Err(e) => {
                let _ = events.send(Err(crate::error::Error::from(e).into())).await;
                return;
            }
        };
        let full = page.len() == PAGE as usize;
        for event in page {
            after = event.seq;
            if events.send(Ok(event_to_proto(event))).await.is_err() {
                return;
            }
        }
        if full {
            continue;
        }
        let committed = async {
            match &mut commits {
                Some(moved) => {
                    // A writer that stopped tells no more: look every second from then on.
                    if moved.changed().await.is_err() {
                        commits = None;
                    }
                }
                None => tokio::time::sleep(LOOK_AGAIN).await,
            }
        };
        tokio::select! {
            () = committed => {}
            () = events.closed() => return,
        }
    }
}
