//! One event's offline proof (C2SP `tlog-proof`, the trail crate's [`TlogProof`]) from a
//! trail: the event (from the file, or from the archive a prune left it in), its inclusion
//! proof and the signed checkpoint that covers it, with the witnesses' cosignatures held for it.
//! The gRPC `TlogProof` call and `toolgate proof --db` make it here; an export writes a page's
//! proofs itself (`ProofsWriter`), in the same form.

use super::Trails;
use crate::error::Error;
use crate::trail::tlog_proof::TlogProof;

/// The proof of event `seq` of `node`'s trail in the tree of the checkpoint of `size` events
/// (0: the last checkpoint), and that tree's size.
pub async fn prove(
    trails: &dyn Trails,
    node: &str,
    seq: u64,
    size: u64,
) -> Result<(TlogProof, u64), Error> {
    let tree = trails.tree()?;
    let checkpoint = trails.checkpoint(node, size).await?.ok_or_else(|| {
        Error::NotFound(match size {
            0 => "the trail has no checkpoint (is [checkpoints] configured?)".to_owned(),
            size => format!("no checkpoint of the tree of {size} events"),
        })
    })?;
    let size = checkpoint.seq.unsigned_abs() - 1;
    if seq == 0 || seq > size {
        return Err(Error::FailedPrecondition(format!(
            "seq {seq} is not in the tree of the checkpoint of {size} events: a proof names an \
             event the checkpoint covers (ask again after the next checkpoint for a newer one)"
        )));
    }
    let event = trails.event(node, i64::try_from(seq).unwrap_or(i64::MAX)).await?;
    let event = event.ok_or_else(|| {
        Error::NotFound(format!(
            "seq {seq} is not on the trail nor in an archive it reads (was it pruned without one?)"
        ))
    })?;
    let hashes = tree.inclusion_proof(seq, size).await?;
    let note = trails.cosigned_note(node, &checkpoint).await?;
    let proof = TlogProof::of(&event, hashes, note)
        .map_err(|e| Error::DataLoss(format!("event {seq} does not read as stored: {e}")))?;
    Ok((proof, size))
}
