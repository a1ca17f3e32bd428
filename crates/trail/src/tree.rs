//! The trail's Merkle tree (RFC 6962, section 2.1; RFC 9162, section 2.1): one leaf per event,
//! in `seq` order, the leaf's data being the event's 32-byte chain hash. Pure: the hashing, the
//! frontier the writer keeps while it appends, and inclusion and consistency proofs with their
//! verification, over a store of *perfect* subtrees (node `(level, index)` covers leaves
//! `index·2^level .. (index+1)·2^level`). Any subtree a proof needs is made from O(log n) of
//! them, so a proof is O(log n) reads.

use sha2::{Digest, Sha256};

/// A node's hash.
pub type Hash = [u8; 32];

/// SHA-256(0x00 ‖ data): a leaf.
pub fn leaf_hash(data: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([0]);
    hasher.update(data);
    hasher.finalize().into()
}

/// SHA-256(0x01 ‖ left ‖ right): an interior node.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([1]);
    hasher.update(left);
    hasher.update(right);
    hasher.finalize().into()
}

/// The root of the empty tree: SHA-256 of nothing.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// A stored perfect subtree: `level` (0 for a leaf) and `index` at that level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Node {
    pub level: u32,
    pub index: u64,
}

/// The right edge of a growing tree: the roots of its perfect subtrees, largest first (one per
/// set bit of its size). Appending a leaf returns the perfect nodes it completes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontier {
    size: u64,
    /// (level, hash), levels strictly decreasing.
    edge: Vec<(u32, Hash)>,
}

impl Frontier {
    /// The frontier of a tree of `size` leaves, from its perfect nodes.
    pub fn of<E>(size: u64, mut node: impl FnMut(Node) -> Result<Hash, E>) -> Result<Self, E> {
        let mut edge = Vec::new();
        let mut start = 0u64;
        for level in (0..64).rev() {
            if size & (1 << level) != 0 {
                edge.push((level, node(Node { level, index: start >> level })?));
                start += 1 << level;
            }
        }
        Ok(Self { size, edge })
    }

    /// How many leaves the tree has.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The roots of the tree's perfect subtrees, largest first: what a store keeps of a tree
    /// to grow it later ([`Frontier::of`] takes them back, in this order).
    pub fn edge(&self) -> impl Iterator<Item = &Hash> {
        self.edge.iter().map(|(_, hash)| hash)
    }

    /// Appends a leaf of `data`; returns every perfect node it completes, the leaf first.
    pub fn push(&mut self, data: &[u8]) -> Vec<(Node, Hash)> {
        self.push_leaf(leaf_hash(data))
    }

    /// Appends a leaf given as its hash; returns every perfect node it completes, the leaf
    /// first.
    pub fn push_leaf(&mut self, leaf: Hash) -> Vec<(Node, Hash)> {
        let mut hash = leaf;
        let mut level = 0;
        let mut index = self.size;
        let mut made = vec![(Node { level, index }, hash)];
        while let Some(&(top, left)) = self.edge.last() {
            if top != level {
                break;
            }
            self.edge.pop();
            hash = node_hash(&left, &hash);
            level += 1;
            index /= 2;
            made.push((Node { level, index }, hash));
        }
        self.edge.push((level, hash));
        self.size += 1;
        made
    }

    /// The root of the tree as it stands.
    pub fn root(&self) -> Hash {
        let mut nodes = self.edge.iter().rev().map(|(_, hash)| *hash);
        let Some(mut root) = nodes.next() else { return empty_root() };
        for left in nodes {
            root = node_hash(&left, &root);
        }
        root
    }
}

/// The largest power of two below `n` (n > 1).
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// Reads subtrees from a store of perfect nodes.
pub struct Subtrees<F> {
    node: F,
}

impl<F, E> Subtrees<F>
where
    F: FnMut(Node) -> Result<Hash, E>,
{
    /// Subtrees over `node`, which answers a perfect node's hash.
    pub fn new(node: F) -> Self {
        Self { node }
    }

    /// The hash of leaves `start..end`, where `start` is a multiple of the largest power of two
    /// not above `end - start`'s span, as every subtree of an RFC 6962 tree is.
    pub fn hash(&mut self, start: u64, end: u64) -> Result<Hash, E> {
        let width = end - start;
        if width.is_power_of_two() && start.is_multiple_of(width) {
            let level = width.trailing_zeros();
            return (self.node)(Node { level, index: start >> level });
        }
        let k = split(width);
        let left = self.hash(start, start + k)?;
        let right = self.hash(start + k, end)?;
        Ok(node_hash(&left, &right))
    }

    /// The root of the tree of its first `size` leaves.
    pub fn root(&mut self, size: u64) -> Result<Hash, E> {
        if size == 0 { Ok(empty_root()) } else { self.hash(0, size) }
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162, 2.1.3.1).
    pub fn inclusion(&mut self, index: u64, size: u64) -> Result<Vec<Hash>, E> {
        let mut proof = Vec::new();
        self.path(index, 0, size, &mut proof)?;
        Ok(proof)
    }

    fn path(&mut self, m: u64, start: u64, end: u64, proof: &mut Vec<Hash>) -> Result<(), E> {
        let n = end - start;
        if n <= 1 {
            return Ok(());
        }
        let k = split(n);
        if m < k {
            self.path(m, start, start + k, proof)?;
            proof.push(self.hash(start + k, end)?);
        } else {
            self.path(m - k, start + k, end, proof)?;
            proof.push(self.hash(start, start + k)?);
        }
        Ok(())
    }

    /// The consistency proof of the tree of `old` leaves with that of `new` (RFC 9162, 2.1.4.1).
    pub fn consistency(&mut self, old: u64, new: u64) -> Result<Vec<Hash>, E> {
        let mut proof = Vec::new();
        if old > 0 && old < new {
            self.subproof(old, 0, new, true, &mut proof)?;
        }
        Ok(proof)
    }

    fn subproof(
        &mut self,
        m: u64,
        start: u64,
        end: u64,
        complete: bool,
        proof: &mut Vec<Hash>,
    ) -> Result<(), E> {
        let n = end - start;
        if m == n {
            if !complete {
                proof.push(self.hash(start, end)?);
            }
            return Ok(());
        }
        let k = split(n);
        if m <= k {
            self.subproof(m, start, start + k, complete, proof)?;
            proof.push(self.hash(start + k, end)?);
        } else {
            self.subproof(m - k, start + k, end, false, proof)?;
            proof.push(self.hash(start, start + k)?);
        }
        Ok(())
    }
}

/// Whether `proof` shows the leaf `leaf` at `index` in the tree of `size` leaves whose root is
/// `root` (RFC 9162, 2.1.3.2).
pub fn verify_inclusion(leaf: &Hash, index: u64, size: u64, proof: &[Hash], root: &Hash) -> bool {
    if index >= size {
        return false;
    }
    let (mut fn_, mut sn) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if sn == 0 {
            return false;
        }
        if fn_ & 1 == 1 || fn_ == sn {
            r = node_hash(p, &r);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    sn == 0 && r == *root
}

/// Whether `proof` shows that the tree of `new` leaves with root `new_root` extends the tree of
/// `old` leaves with root `old_root` (RFC 9162, 2.1.4.2).
pub fn verify_consistency(
    old: u64,
    new: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> bool {
    if old > new {
        return false;
    }
    if old == new {
        return proof.is_empty() && old_root == new_root;
    }
    if old == 0 {
        return proof.is_empty();
    }
    let mut path: Vec<Hash> = proof.to_vec();
    if old.is_power_of_two() {
        path.insert(0, *old_root);
    }
    let Some((first, rest)) = path.split_first() else { return false };
    let (mut fn_, mut sn) = (old - 1, new - 1);
    while fn_ & 1 == 1 {
        fn_ >>= 1;
        sn >>= 1;
    }
    let (mut fr, mut sr) = (*first, *first);
    for c in rest {
        if sn == 0 {
            return false;
        }
        if fn_ & 1 == 1 || fn_ == sn {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    fr == *old_root && sr == *new_root && sn == 0
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::convert::Infallible;

    use super::*;

    /// The leaves of RFC 6962's reference tests (certificate-transparency-go, merkle tree
    /// tests), and the roots of the trees of their first 1..=8.
    const LEAVES: [&str; 8] = [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ];
    const ROOTS: [&str; 8] = [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ];

    /// A tree of `n` leaves `leaf(i)`: its frontier and its stored perfect nodes.
    fn tree(n: u64, leaf: impl Fn(u64) -> Vec<u8>) -> (Frontier, HashMap<Node, Hash>) {
        let mut frontier = Frontier::default();
        let mut nodes = HashMap::new();
        for i in 0..n {
            nodes.extend(frontier.push(&leaf(i)));
        }
        (frontier, nodes)
    }

    fn reference(i: u64) -> Vec<u8> {
        hex::decode(LEAVES[i as usize]).unwrap()
    }

    fn store(
        nodes: &HashMap<Node, Hash>,
    ) -> Subtrees<impl FnMut(Node) -> Result<Hash, Infallible> + '_> {
        Subtrees::new(move |node| Ok(nodes[&node]))
    }

    #[test]
    fn roots_are_rfc_6962s() {
        assert_eq!(
            hex::encode(empty_root()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        for n in 1..=8 {
            let (frontier, nodes) = tree(n, reference);
            assert_eq!(hex::encode(frontier.root()), ROOTS[n as usize - 1], "size {n}");
            assert_eq!(hex::encode(store(&nodes).root(n).unwrap()), ROOTS[n as usize - 1]);
        }
    }

    #[test]
    fn reference_proofs_are_rfc_6962s() {
        let (_, nodes) = tree(8, reference);
        let mut subtrees = store(&nodes);
        // certificate-transparency-go's inclusion test: leaf 0 of 8, and leaf 5 of 8.
        let proof: Vec<_> = subtrees.inclusion(0, 8).unwrap().iter().map(hex::encode).collect();
        assert_eq!(
            proof,
            [
                "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
            ]
        );
        // And the consistency of the tree of 6 leaves with that of 8.
        let proof: Vec<_> = subtrees.consistency(6, 8).unwrap().iter().map(hex::encode).collect();
        assert_eq!(
            proof,
            [
                "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            ]
        );
    }

    #[test]
    fn the_worked_example_of_the_docs_is_true() {
        let docs = include_str!("../../../docs/trail-format.md");
        let (_, nodes) = tree(8, reference);
        let mut subtrees = store(&nodes);
        let mut values = vec![subtrees.root(8).unwrap()];
        values.extend(subtrees.inclusion(0, 8).unwrap());
        values.extend(subtrees.consistency(6, 8).unwrap());
        for value in values {
            assert!(docs.contains(&hex::encode(value)), "{} not in the docs", hex::encode(value));
        }
    }

    #[test]
    fn every_proof_of_every_small_tree_verifies_and_a_changed_one_does_not() {
        let leaf = |i: u64| i.to_be_bytes().to_vec();
        let (_, nodes) = tree(70, leaf);
        let mut subtrees = store(&nodes);
        for size in 1..=70 {
            let root = subtrees.root(size).unwrap();
            for index in 0..size {
                let proof = subtrees.inclusion(index, size).unwrap();
                let hash = leaf_hash(&leaf(index));
                assert!(verify_inclusion(&hash, index, size, &proof, &root), "{index} in {size}");
                if size > 1 {
                    let other = if index + 1 < size { index + 1 } else { index - 1 };
                    assert!(!verify_inclusion(&hash, other, size, &proof, &root));
                }
                assert!(!verify_inclusion(&leaf_hash(b"other"), index, size, &proof, &root));
            }
            for old in 1..=size {
                let old_root = subtrees.root(old).unwrap();
                let proof = subtrees.consistency(old, size).unwrap();
                assert!(verify_consistency(old, size, &old_root, &root, &proof), "{old}->{size}");
                if old < size {
                    assert!(!verify_consistency(old, size, &root, &root, &proof));
                    let mut bad = proof.clone();
                    bad[0][0] ^= 1;
                    assert!(!verify_consistency(old, size, &old_root, &root, &bad));
                }
            }
        }
    }

    #[test]
    fn a_frontier_rebuilt_from_stored_nodes_goes_on_as_before() {
        let leaf = |i: u64| i.to_le_bytes().to_vec();
        let (mut grown, nodes) = tree(37, leaf);
        let mut rebuilt = Frontier::of(37, |node| Ok::<_, Infallible>(nodes[&node])).unwrap();
        assert_eq!(rebuilt, grown);
        assert_eq!(rebuilt.push(&leaf(37)), grown.push(&leaf(37)));
        assert_eq!(rebuilt.root(), grown.root());
    }
}
