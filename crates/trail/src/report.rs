//! What a verification found, and what it checks beyond the chain: the same report for a
//! trail read from its store and for an export read from a file.

use crate::Problem;
use crate::checkpoint::Checkpoint;
use crate::note::NoteVerifier;

/// What a verification found.
#[derive(Debug, Default)]
pub struct Report {
    /// Events (or rows) checked.
    pub checked: u64,
    pub problems: Vec<Problem>,
    /// The last event checked: its `seq` and `hash`.
    pub last: Option<(i64, String)>,
    /// The checkpoints on the trail whose root was checked against the tree.
    pub checkpoints: u64,
    /// Whether their signatures were checked (a verifier key was given).
    pub signatures_checked: bool,
    /// The events after the last checkpoint on the trail: what a lone file can still hide a
    /// rewrite of. For an export with proofs: the rows after the checkpoint's tree.
    pub uncovered: u64,
    /// An export's rows proven in the checkpoint's tree by their inclusion proofs.
    pub proven: u64,
    /// Whether an export's manifest signature was checked (and verified, or a problem says not).
    pub manifest_signed: bool,
    /// The events pruned from the trail's file before the first one checked, as its last
    /// `prune` event records them: verified from the one after, in the archive otherwise.
    pub pruned: Option<Prefix>,
}

/// The first events of a trail, pruned from its file: 1 through `through`, the chain hash of
/// the last and the root of their tree, as the `prune` event at `seq` records them. (Of a
/// node of a fleet store: as retention recorded its cut, `seq` the checkpoint that covered it.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    pub through: i64,
    pub seq: i64,
    pub hash: super::Hash,
    pub root: super::Hash,
    /// Where they were archived, as the prune event says.
    pub archive: String,
}

impl Report {
    /// Whether nothing is wrong.
    pub fn intact(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What a verification checks beyond the chain.
#[derive(Debug, Clone, Default)]
pub struct Anchors {
    /// A checkpoint kept elsewhere, its signature already checked: the trail must extend it.
    pub checkpoint: Option<Checkpoint>,
    /// The log's verifier keys, the current one and those it replaced: every checkpoint on
    /// the trail must be signed by one of them. Empty: signatures are not checked.
    pub keys: Vec<NoteVerifier>,
    /// The witnesses whose cosignature of `checkpoint` verified, and how many are required.
    pub cosigned: usize,
    pub cosignatures_required: usize,
}

impl Anchors {
    /// The problem of too few witnesses having cosigned the checkpoint, if they are.
    pub fn too_few_cosignatures(&self) -> Option<Problem> {
        (self.cosigned < self.cosignatures_required).then_some(Problem::TooFewCosignatures {
            required: self.cosignatures_required,
            valid: self.cosigned,
        })
    }
}
