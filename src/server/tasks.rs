//! The tasks a server runs beside its services, in one registry that starts them and stops
//! them in a documented order:
//!
//! 1. the tasks that only serve the services (reloads, expiries, health): aborted once the
//!    services stop answering;
//! 2. the checkpoint publisher: every call is answered, so its last checkpoint covers all;
//! 3. the witness submitter: that last checkpoint goes to the witnesses;
//! 4. the followers (shipping, exporting): each stops where it stands, and its cursor resumes
//!    it at the next start;
//!
//! and then the writer, once every handle to it is gone (`server::run`).

use std::future::Future;

use tokio::sync::watch;
use tokio::task::JoinHandle;

/// When a task stops, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Retention,
    Checkpoints,
    Witnesses,
    Followers,
}

/// The running tasks.
#[derive(Debug, Default)]
pub struct Tasks {
    alongside: Vec<JoinHandle<()>>,
    stopped: Vec<(Stage, &'static str, watch::Sender<bool>, JoinHandle<()>)>,
}

impl Tasks {
    /// Starts `task`, handing it the signal that stops it at `stage`.
    pub fn start<F>(
        &mut self,
        stage: Stage,
        name: &'static str,
        task: impl FnOnce(watch::Receiver<bool>) -> F,
    ) where
        F: Future<Output = ()> + Send + 'static,
    {
        tracing::debug!(task = name, "starting");
        let (stop, stopping) = watch::channel(false);
        self.stopped.push((stage, name, stop, tokio::spawn(task(stopping))));
    }

    /// Starts `task`, which runs until the services stop answering.
    pub fn alongside(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.alongside.push(tokio::spawn(task));
    }

    /// Stops the tasks that run alongside the services.
    pub async fn stop_alongside(&mut self) {
        for task in self.alongside.drain(..) {
            task.abort();
            let _ = task.await;
        }
    }

    /// Stops the rest, a stage at a time; the tasks of one stage together.
    pub async fn stop(mut self) {
        self.stop_alongside().await;
        self.stopped.sort_by_key(|(stage, ..)| *stage);
        let mut tasks = self.stopped.into_iter().peekable();
        while let Some(&(stage, ..)) = tasks.peek() {
            let mut stage_tasks = Vec::new();
            while let Some((_, name, stop, task)) = tasks.next_if(|(s, ..)| *s == stage) {
                let _ = stop.send(true);
                stage_tasks.push((name, task));
            }
            for (name, task) in stage_tasks {
                if let Err(e) = task.await {
                    tracing::error!(task = name, error = %e, "a task failed");
                }
            }
        }
    }
}
