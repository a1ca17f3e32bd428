//! What a follower hands events to: a [`Sink`], and what it answers.

use std::future::Future;

use crate::store::{Reader, StoreError};
use crate::trail::Event;

/// What a sink took of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken {
    /// The seq of the last event it took: the batch, or a prefix of it (the rest comes again).
    pub through: i64,
    /// How many events it counts as delivered (for its metrics).
    pub counted: u64,
    /// The destination takes no more until the sink's [`Sink::caught_up`] work is done (a
    /// fleet that requires the witnesses' cosignatures of a checkpoint before the events after
    /// it): the follower calls it, then waits for the next commit or look.
    pub waits: bool,
}

/// Why a sink did not take a batch.
#[derive(Debug, thiserror::Error)]
pub enum Trouble {
    /// The batch is too large for the destination: the follower tries again with half.
    #[error("{0}")]
    TooLarge(String),
    /// The destination could not be reached, or failed: tried again after a pause.
    #[error("{0}")]
    Failed(String),
    /// The destination's own checks refused the batch (an alarm there): tried again after a
    /// pause, and logged as an error.
    #[error("{0}")]
    Refused(String),
    /// Whoever the sink delivered to is gone: the follower stops.
    #[error("the receiver is gone")]
    Gone,
}

/// A destination of the trail's committed events, in `seq` order. The follower
/// ([`super::Follower`]) owns reading, batching, pauses, logging, metrics and stopping; a
/// sink only says where it stands and delivers.
pub trait Sink: Send + 'static {
    /// The sink's name in the log and in its metrics' names (`toolgate_<name>_lag_events`).
    const NAME: &'static str;
    /// What it does, as the log says it: "shipping" is behind.
    const DOING: &'static str;
    /// What the log says once trouble is over: "shipping to the fleet store again".
    const AGAIN: &'static str;
    /// For a destination that must take every event before it may leave the file, its name
    /// in what retention says it waits for ("the fleet destination"): its follower is then
    /// one of retention's holders (`Follower::holder`).
    const HOLDS: Option<&'static str> = None;

    /// Where it delivers, for the log: the fleet node, the collector's endpoint.
    fn destination(&self) -> &str {
        ""
    }

    /// The last seq the destination holds (0 for none): asked at start and after any trouble,
    /// so that a restart of either side resumes where the destination stands.
    fn resume(&mut self, reader: &Reader) -> impl Future<Output = Result<i64, Trouble>> + Send;

    /// Whether it takes nothing now, from after `from` (a fleet awaiting its witnesses),
    /// asked before a batch is read: the follower then does the [`Sink::caught_up`] work and
    /// waits for the next commit or look.
    fn waits(
        &mut self,
        _reader: &Reader,
        _from: i64,
    ) -> impl Future<Output = Result<bool, Trouble>> + Send {
        async { Ok(false) }
    }

    /// Delivers `events` (at least one, in order, each after the last it took), read from
    /// `reader`, which it may read more of.
    fn take(
        &mut self,
        reader: &Reader,
        events: Vec<Event>,
    ) -> impl Future<Output = Result<Taken, Trouble>> + Send;

    /// Once it holds everything up to `through`: any work that follows the events.
    fn caught_up(
        &mut self,
        _reader: &Reader,
        _through: i64,
    ) -> impl Future<Output = Result<(), Trouble>> + Send {
        async { Ok(()) }
    }

    /// The trail could not be read: whether to keep following (after a pause). By default it
    /// does; a sink that cannot wait says why to its receiver and stops.
    fn unreadable(&mut self, _error: StoreError) -> impl Future<Output = bool> + Send {
        async { true }
    }

    /// Resolves when whoever the sink delivers to is gone (never, by default).
    fn gone(&self) -> impl Future<Output = ()> + Send {
        std::future::pending()
    }

    /// Called once, when the follower stops.
    fn close(self) -> impl Future<Output = ()> + Send
    where
        Self: Sized,
    {
        async {}
    }
}
