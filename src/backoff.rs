//! The rhythm of a task that follows the trail (the follower, the console's activity): after
//! trouble a pause that doubles per failure up to 30 s, each kind of trouble told to the log
//! once, not once per try; and for a task that polls, straight on while there is more, a pause
//! once caught up.

use std::time::Duration;

/// The longest pause before a destination in trouble is tried again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A shipping task's pauses and the trouble it last logged.
#[derive(Debug)]
pub struct Backoff {
    every: Duration,
    failures: u32,
    trouble: Option<String>,
}

impl Backoff {
    /// Pauses of `every` once caught up, doubled per failure after trouble.
    pub fn new(every: Duration) -> Self {
        Self { every, failures: 0, trouble: None }
    }

    /// A round that went through: the pause before the next (none when `more` is waiting),
    /// and whether it ends trouble that was logged.
    pub fn succeeded(&mut self, more: bool) -> (Duration, bool) {
        self.failures = 0;
        let recovered = self.trouble.take().is_some();
        (if more { Duration::ZERO } else { self.every }, recovered)
    }

    /// A round that failed with `message`: the pause before the next, and whether this
    /// trouble is new (to be logged).
    pub fn failed(&mut self, message: String) -> (Duration, bool) {
        self.failures += 1;
        let pause = (self.every * 2u32.saturating_pow(self.failures.min(8))).min(MAX_BACKOFF);
        let new = self.trouble.as_deref() != Some(message.as_str());
        self.trouble = Some(message);
        (pause, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_to_a_cap_and_each_trouble_is_told_once() {
        let mut backoff = Backoff::new(Duration::from_millis(200));
        assert_eq!(backoff.failed("down".into()), (Duration::from_millis(400), true));
        assert_eq!(backoff.failed("down".into()), (Duration::from_millis(800), false));
        assert!(backoff.failed("refused".into()).1, "another kind of trouble");
        for _ in 0..10 {
            backoff.failed("down".into());
        }
        assert_eq!(backoff.failed("down".into()).0, MAX_BACKOFF);
        assert_eq!(backoff.succeeded(false), (Duration::from_millis(200), true));
        assert_eq!(backoff.succeeded(true), (Duration::ZERO, false));
    }
}
