//! The sink of `Audit/Subscribe`: the trail followed as it grows, into one caller's stream.
//! Events already on the trail come a page at a time from the requested seq; once caught up,
//! the follower waits for the writer's next commit, so a consumer sees each event once, in
//! order, whatever it filters on.

use tokio::sync::{mpsc, watch};
use tonic::Status;

use super::{Follower, Sink, Taken, Trail, Trouble};
use crate::proto;
use crate::store::{PAGE, Reader, StoreError};
use crate::trail::Event;
use crate::trail::Filter;

/// One caller's stream.
#[derive(Debug)]
pub struct Subscriber {
    after: i64,
    wire: fn(Event) -> proto::Event,
    events: mpsc::Sender<Result<proto::Event, Status>>,
}

impl Sink for Subscriber {
    const NAME: &'static str = "subscribe";
    const DOING: &'static str = "a subscription";
    const AGAIN: &'static str = "streaming again";

    async fn resume(&mut self, _reader: &Reader) -> Result<i64, Trouble> {
        Ok(self.after)
    }

    async fn take(&mut self, _reader: &Reader, events: Vec<Event>) -> Result<Taken, Trouble> {
        let counted = events.len() as u64;
        for event in events {
            let seq = event.seq;
            self.events.send(Ok((self.wire)(event))).await.map_err(|_| Trouble::Gone)?;
            self.after = seq;
        }
        Ok(Taken { through: self.after, counted, waits: false })
    }

    /// The caller hears why, and the stream ends.
    async fn unreadable(&mut self, error: StoreError) -> bool {
        let _ = self.events.send(Err(crate::error::Error::from(error).into())).await;
        false
    }

    async fn gone(&self) {
        self.events.closed().await;
    }
}

/// Sends every event matching `filter` after seq `after` to `events`, each as `wire` puts it,
/// then each one that commits, until the receiver is gone or the server stops (even while a
/// slow receiver has the stream full).
pub async fn follow(
    (trail, stopping): (Trail, watch::Receiver<bool>),
    filter: Filter,
    after: i64,
    wire: fn(Event) -> proto::Event,
    events: mpsc::Sender<Result<proto::Event, Status>>,
) {
    let subscriber = Subscriber { after, wire, events };
    let follower = Follower::new(subscriber, PAGE, super::LOOK_AGAIN);
    let mut stop = stopping.clone();
    let stopped = async move {
        // A shutdown that no one can signal never comes: the grace period ends the stream.
        if stop.wait_for(|stop| *stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = follower.filtered(filter).run(trail, stopping) => {}
        () = stopped => {}
    }
}
