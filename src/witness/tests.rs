use super::*;
use crate::trail::note::NoteSigner;
use crate::trail::{Frontier, Hash, Subtrees};

/// A log of `n` leaves (leaf i is the bytes of i): its tree's nodes and root by size.
struct Log {
    signer: NoteSigner,
    leaves: Vec<Hash>,
}

impl Log {
    fn new(name: &str) -> Self {
        Self { signer: NoteSigner::generate(name).unwrap(), leaves: Vec::new() }
    }

    fn grow(&mut self, n: u64, salt: u8) {
        for i in 0..n {
            self.leaves.push(crate::trail::leaf_hash(&[salt, i as u8]));
        }
    }

    fn subtrees(&self) -> Subtrees<impl FnMut(crate::trail::Node) -> Result<Hash, ()> + '_> {
        let mut all = Frontier::default();
        let mut nodes = HashMap::new();
        for leaf in &self.leaves {
            for (node, hash) in all.push_leaf(*leaf) {
                nodes.insert((node.level, node.index), hash);
            }
        }
        Subtrees::new(move |node: crate::trail::Node| {
            nodes.get(&(node.level, node.index)).copied().ok_or(())
        })
    }

    fn checkpoint(&self, size: u64) -> String {
        let root = self.subtrees().root(size).unwrap();
        let origin = self.signer.key().name.clone();
        Checkpoint { origin, size, root }.sign(&self.signer).unwrap()
    }

    fn body(&self, old: u64, size: u64) -> Vec<u8> {
        let proof = if old == 0 { vec![] } else { self.subtrees().consistency(old, size).unwrap() };
        AddCheckpoint::body(old, &proof, &self.checkpoint(size)).into_bytes()
    }
}

fn witness(logs: &[&Log], dir: &tempfile::TempDir) -> Witness {
    let cosigner = Cosigner::new(&NoteSigner::generate("witness.test/w").unwrap());
    let state = State::open(&dir.path().join("witness.db")).unwrap();
    Witness::new(cosigner, logs.iter().map(|l| l.signer.verifier()).collect(), state)
}

#[test]
fn a_witness_cosigns_each_extension_and_remembers_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::new("toolgate/a");
    log.grow(5, 0);
    let witness = witness(&[&log], &dir);
    let first = witness.add_checkpoint(&log.body(0, 5), 1000);
    assert_eq!(first.status, 200, "{first:?}");
    let note = log.checkpoint(5) + &first.body;
    let parsed = Note::parse(&note).unwrap();
    assert_eq!(witness.cosigner.verifier().cosigned(&parsed), Some(1000));
    log.grow(7, 0);
    assert_eq!(witness.add_checkpoint(&log.body(5, 12), 1001).status, 200);
    // The same checkpoint again is cosigned again.
    assert_eq!(witness.add_checkpoint(&log.body(12, 12), 1002).status, 200);
    // A client that does not know the witness's size learns it from the 409.
    let stale = witness.add_checkpoint(&log.body(0, 12), 1003);
    assert_eq!(
        (stale.status, stale.content_type, stale.body.as_str()),
        (409, SIZE_CONTENT_TYPE, "12\n")
    );
    let state = witness.state.lock().unwrap();
    assert_eq!(state.latest("toolgate/a").unwrap().unwrap().size, 12);
    assert!(state.refusals().unwrap().is_empty(), "a stale old size is not evidence");
}

#[test]
fn rollbacks_forks_and_bad_proofs_are_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::new("toolgate/a");
    log.grow(8, 0);
    let witness = witness(&[&log], &dir);
    assert_eq!(witness.add_checkpoint(&log.body(0, 8), 1).status, 200);
    // A rollback: the log signs a smaller tree.
    let rollback = witness.add_checkpoint(&log.body(0, 6), 2);
    assert_eq!((rollback.status, rollback.body.as_str()), (409, "8\n"));
    // A fork at the same size: another history under the same key.
    let mut fork = Log { signer: NoteSigner::parse(&log.signer.encode()).unwrap(), leaves: vec![] };
    fork.grow(8, 1);
    assert_eq!(witness.add_checkpoint(&fork.body(8, 8), 3).status, 409);
    // Replayed, the same refusals are not kept again.
    assert_eq!(witness.add_checkpoint(&fork.body(8, 8), 3).status, 409);
    assert_eq!(witness.add_checkpoint(&log.body(0, 6), 2).status, 409);
    // A fork that grew: its proof from 8 cannot match the root the witness holds.
    fork.grow(4, 1);
    assert_eq!(witness.add_checkpoint(&fork.body(8, 12), 4).status, 422);
    // The honest log still extends.
    log.grow(4, 0);
    assert_eq!(witness.add_checkpoint(&log.body(8, 12), 5).status, 200);
    let refusals = witness.state.lock().unwrap().refusals().unwrap();
    let kept: Vec<_> =
        refusals.iter().map(|r| (r.status, r.reason.split(':').next().unwrap())).collect();
    assert_eq!(
        kept,
        [(409, "rollback"), (409, "fork"), (422, "the consistency proof does not verify")]
    );
}

#[test]
fn unknown_logs_bad_signatures_and_bad_bodies_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::new("toolgate/a");
    log.grow(3, 0);
    let witness = witness(&[&log], &dir);
    let mut stranger = Log::new("toolgate/b");
    stranger.grow(3, 0);
    assert_eq!(witness.add_checkpoint(&stranger.body(0, 3), 1).status, 404);
    let mut impostor = Log::new("toolgate/a");
    impostor.grow(3, 0);
    assert_eq!(witness.add_checkpoint(&impostor.body(0, 3), 1).status, 403);
    let forged = String::from_utf8(log.body(0, 3)).unwrap().replacen("\n3\n", "\n4\n", 1);
    assert_eq!(witness.add_checkpoint(forged.as_bytes(), 1).status, 403);
    assert_eq!(witness.add_checkpoint(b"old 4\n\n", 1).status, 400);
    let too_old = String::from_utf8(log.body(0, 3)).unwrap().replacen("old 0", "old 9", 1);
    assert_eq!(witness.add_checkpoint(too_old.as_bytes(), 1).status, 400);
    let first_with_proof = AddCheckpoint::body(0, &[[0; 32]], &log.checkpoint(3));
    assert_eq!(witness.add_checkpoint(first_with_proof.as_bytes(), 1).status, 422);
    assert_eq!(witness.add_checkpoint(&log.body(0, 3), 1).status, 200);
}
