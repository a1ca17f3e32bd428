//! Adapters that turn agent harnesses' hooks into Decide and Execute calls.

pub mod claude;
