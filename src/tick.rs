//! The rhythm of the periodic tasks beside the follower (the checkpoint publisher, the witness
//! submitter, retention, the console's activity and chain health): a task says what one round
//! does and when it wants the next ([`Periodic`]); its [`Ticker`] waits for that (a timer, or a
//! commit no sooner than a gap after the last round began), stops between rounds — a round in
//! flight always finishes — and runs the last round the task asks for at a stop ([`Last`]).
//! Pauses after trouble are the task's own (a `Backoff`, a retry tick): it returns them as its
//! next wait.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// When a task's next round is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// After this long (at once for zero).
    After(Duration),
    /// On the next commit, but no sooner than the ticker's gap after the last round began, and
    /// at the latest after `at_most` without one.
    Commit { at_most: Duration },
}

/// What a task does when it is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// Nothing: it stops between rounds.
    Nothing,
    /// A last round, however long it takes (the publisher's checkpoint at shutdown).
    Whole,
    /// A last round cut after this long (the submitter's last pass to the witnesses).
    Within(Duration),
}

/// A task that runs in rounds.
pub trait Periodic: Send {
    /// Runs one round (`last` for the round at a stop) and says when the next is due.
    fn round(&mut self, last: bool) -> impl Future<Output = Next> + Send;
}

/// Runs a [`Periodic`] task's rounds until it is stopped.
#[derive(Debug)]
pub struct Ticker<P> {
    task: P,
    first: Next,
    commits: Option<watch::Receiver<i64>>,
    gap: Duration,
    last: Last,
}

impl<P: Periodic> Ticker<P> {
    /// Runs `task`'s first round when `first` says, with no last round at a stop.
    pub fn new(task: P, first: Next) -> Self {
        Self { task, first, commits: None, gap: Duration::ZERO, last: Last::Nothing }
    }

    /// Wakes on the writer's commits (`Next::Commit`), no sooner than `gap` after the last round
    /// began, so that under load one round takes the commits of `gap` together.
    pub fn woken_by(self, commits: watch::Receiver<i64>, gap: Duration) -> Self {
        Self { commits: Some(commits), gap, ..self }
    }

    /// What the task does at a stop.
    pub fn at_stop(self, last: Last) -> Self {
        Self { last, ..self }
    }

    /// Runs rounds until `stopping` turns true, then the last round [`Ticker::at_stop`] asks for.
    /// A first round due at once runs whatever `stopping` says.
    pub async fn run(mut self, mut stopping: watch::Receiver<bool>) {
        let mut next = self.first;
        let mut began = Instant::now();
        if next == Next::After(Duration::ZERO) {
            next = self.task.round(false).await;
        }
        loop {
            let stop = tokio::select! {
                biased;
                _ = stopping.wait_for(|stop| *stop) => true,
                () = wait(next, self.commits.as_mut(), began + self.gap) => false,
            };
            if let Some(commits) = &mut self.commits {
                commits.borrow_and_update();
            }
            if stop {
                return match self.last {
                    Last::Nothing => {}
                    Last::Whole => drop(self.task.round(true).await),
                    Last::Within(within) => {
                        let _ = tokio::time::timeout(within, self.task.round(true)).await;
                    }
                };
            }
            began = Instant::now();
            next = self.task.round(false).await;
        }
    }
}

/// Waits as `next` says; for a commit, no sooner than `not_before`.
async fn wait(next: Next, commits: Option<&mut watch::Receiver<i64>>, not_before: Instant) {
    match (next, commits) {
        (Next::After(pause), _) => tokio::time::sleep(pause).await,
        (Next::Commit { at_most }, Some(commits)) => {
            let _ = tokio::time::timeout(at_most, commits.changed()).await;
            tokio::time::sleep_until(not_before).await;
        }
        (Next::Commit { at_most }, None) => tokio::time::sleep(at_most).await,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Records each round it runs, and wants the next as `next` says.
    struct Rounds {
        seen: Arc<Mutex<Vec<bool>>>,
        next: Next,
    }

    impl Periodic for Rounds {
        async fn round(&mut self, last: bool) -> Next {
            self.seen.lock().unwrap().push(last);
            self.next
        }
    }

    async fn rounds_until_stopped(next: Next, last: Last, commits: u32) -> Vec<bool> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let task = Rounds { seen: seen.clone(), next };
        let (committed, commits_rx) = watch::channel(0);
        let (stop, stopping) = watch::channel(false);
        let ticker = Ticker::new(task, Next::After(Duration::ZERO))
            .woken_by(commits_rx, Duration::ZERO)
            .at_stop(last);
        let running = tokio::spawn(ticker.run(stopping));
        for seq in 1..=commits {
            tokio::time::sleep(Duration::from_millis(20)).await;
            committed.send_replace(i64::from(seq));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        stop.send_replace(true);
        running.await.unwrap();
        seen.lock().unwrap().clone()
    }

    #[tokio::test]
    async fn a_task_woken_by_commits_runs_a_round_for_each_and_its_last_at_the_stop() {
        let seen =
            rounds_until_stopped(Next::Commit { at_most: Duration::from_secs(60) }, Last::Whole, 3)
                .await;
        // The first round at once, one per commit, and the last.
        assert_eq!(seen, [false, false, false, false, true]);
    }

    #[tokio::test]
    async fn a_task_that_asks_for_no_last_round_just_stops() {
        let seen =
            rounds_until_stopped(Next::After(Duration::from_secs(60)), Last::Nothing, 2).await;
        assert_eq!(seen, [false], "a timer an hour away: the commits do not wake it");
    }

    #[tokio::test]
    async fn a_first_round_due_at_once_runs_even_when_stopped_already() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let task = Rounds { seen: seen.clone(), next: Next::After(Duration::ZERO) };
        let (_stop, stopping) = watch::channel(true);
        Ticker::new(task, Next::After(Duration::ZERO)).run(stopping).await;
        assert_eq!(*seen.lock().unwrap(), [false]);
    }
}
