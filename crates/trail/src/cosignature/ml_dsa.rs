//! The ML-DSA-44 cosignature (C2SP `tlog-cosignature`, type 0x06): post-quantum, and it commits
//! to the cosigner's name. The signature line is the Ed25519 form's, with an ML-DSA-44
//! signature (FIPS 204, the pure form with an empty context):
//!
//! ```text
//! — <witness name> base64(key id, 4 bytes ‖ time, u64 big-endian ‖ signature, 2420 bytes)
//! ```
//!
//! over the binary `cosigned_message`:
//!
//! ```text
//! "subtree/v1\n\0" ‖ u8 length ‖ cosigner name ‖ u64 time ‖ u8 length ‖ log origin
//!                  ‖ u64 start (0: a checkpoint) ‖ u64 end (the tree size) ‖ root hash, 32 bytes
//! ```
//!
//! The checkpoint's extension lines are not signed; a cosigner refuses a checkpoint that has
//! any, so that no one reads a statement into them.

use ml_dsa::{EncodedSignature, EncodedVerifyingKey, MlDsa44, Seed, Signature, SigningKey};

use crate::checkpoint::Checkpoint;

/// The signature type of ML-DSA-44 cosignature keys.
pub(super) const TYPE: u8 = 0x06;

/// Bytes of a cosignature after its key id: the time, then the ML-DSA-44 signature.
pub(super) const COSIGNATURE_BYTES: usize = 8 + 2420;

/// The first bytes of every message.
const LABEL: &[u8; 12] = b"subtree/v1\n\0";

/// The message a cosigner named `name` signs at `time` for `checkpoint`; `None` when a name is
/// empty or longer than 255 bytes.
pub(super) fn message(name: &str, time: u64, checkpoint: &Checkpoint) -> Option<Vec<u8>> {
    let short = |text: &str| u8::try_from(text.len()).ok().filter(|&n| n > 0);
    let (name_length, origin_length) = (short(name)?, short(&checkpoint.origin)?);
    let mut message = LABEL.to_vec();
    message.push(name_length);
    message.extend_from_slice(name.as_bytes());
    message.extend_from_slice(&time.to_be_bytes());
    message.push(origin_length);
    message.extend_from_slice(checkpoint.origin.as_bytes());
    message.extend_from_slice(&0u64.to_be_bytes());
    message.extend_from_slice(&checkpoint.size.to_be_bytes());
    message.extend_from_slice(&checkpoint.root);
    Some(message)
}

/// The signing key made from a 32-byte seed (FIPS 204's `ML-DSA.KeyGen_internal`).
pub(super) fn signing_key(seed: [u8; 32]) -> SigningKey<MlDsa44> {
    SigningKey::from_seed(&Seed::from(seed))
}

/// The 1312-byte public key of `key`.
pub(super) fn public_key(key: &SigningKey<MlDsa44>) -> Vec<u8> {
    key.expanded_key().verifying_key().encode().to_vec()
}

/// `message` signed by `key`: ML-DSA-44's deterministic variant, empty context.
pub(super) fn sign(key: &SigningKey<MlDsa44>, message: &[u8]) -> Option<Vec<u8>> {
    let signature = key.expanded_key().sign_deterministic(message, &[]).ok()?;
    Some(signature.encode().to_vec())
}

/// Whether `signature` is the key `public`'s over `message` (1312 and 2420 bytes).
pub(super) fn verifies(public: &[u8], message: &[u8], signature: &[u8]) -> bool {
    let (Ok(public), Ok(signature)) = (
        EncodedVerifyingKey::<MlDsa44>::try_from(public),
        EncodedSignature::<MlDsa44>::try_from(signature),
    ) else {
        return false;
    };
    let key = ml_dsa::VerifyingKey::<MlDsa44>::decode(&public);
    Signature::<MlDsa44>::decode(&signature)
        .is_some_and(|signature| key.verify_with_context(message, &[], &signature))
}

/// Whether `public` reads as an ML-DSA-44 public key.
pub(super) fn is_public_key(public: &[u8]) -> bool {
    EncodedVerifyingKey::<MlDsa44>::try_from(public).is_ok()
}
