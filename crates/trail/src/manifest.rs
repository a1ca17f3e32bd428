//! The manifest written beside an export: what was exported, from which trail, and the file's
//! hash, so that whoever receives the CSV can check that it is whole and unaltered. With
//! `--proofs` it also carries the signed checkpoint the rows are proven against and the proofs
//! file's hash; with `--sign-key` it is signed, so that its own claims (the head, the row count)
//! cannot be re-forged along with a cut-short file.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Filter;
use crate::note::{Note, NoteError, NoteSigner, NoteVerifier};

/// The manifest, serialized as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `toolgate-csv-v2` (its texts guarded at every field's start); `toolgate-csv-v1` for
    /// exports before it (guarded at each cell's start only).
    pub format: String,
    /// The filter the export applied; empty for a whole trail.
    pub filter: Filter,
    pub first_seq: Option<i64>,
    pub last_seq: Option<i64>,
    pub rows: u64,
    /// The trail's last event when the export started.
    pub head_seq: Option<i64>,
    pub head_hash: Option<String>,
    /// Hex SHA-256 of the CSV file, byte order mark included.
    pub csv_sha256: String,
    pub bom: bool,
    /// When the export was made, RFC 3339 UTC.
    pub exported_at: String,
    /// The signed checkpoint (with its witnesses' cosignatures) the rows' inclusion proofs lead
    /// to: the trail's latest when the export started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// The proofs file's name, beside the manifest, and its hex SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proofs_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proofs_sha256: Option<String>,
    /// A signed note over the manifest's digest ([`Manifest::digest_text`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The format name manifests carry.
pub const MANIFEST_FORMAT: &str = "toolgate-csv-v2";
/// The format of exports before v2: texts guarded at each cell's start only.
pub const MANIFEST_FORMAT_V1: &str = "toolgate-csv-v1";

impl Manifest {
    /// The text a manifest's signature signs: a header line and the hex SHA-256 of the
    /// manifest's RFC 8785 canonical JSON without its `signature`.
    pub fn digest_text(&self) -> String {
        let unsigned = Self { signature: None, ..self.clone() };
        let canonical = serde_jcs::to_vec(&unsigned).unwrap_or_default();
        format!("toolgate-manifest/v1\n{}\n", hex::encode(Sha256::digest(canonical)))
    }

    /// Signs the manifest with `signer`.
    pub fn sign(&mut self, signer: &NoteSigner) -> Result<(), NoteError> {
        self.signature = None;
        self.signature = Some(signer.sign(&self.digest_text())?);
        Ok(())
    }

    /// Whether one of `keys` signed this manifest as it stands.
    pub fn signed_by(&self, keys: &[NoteVerifier]) -> bool {
        let Some(signature) = &self.signature else { return false };
        Note::parse(signature).is_ok_and(|note| {
            note.text == self.digest_text() && keys.iter().any(|key| note.signed_by(key))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT.into(),
            filter: Filter::default(),
            first_seq: Some(1),
            last_seq: Some(9),
            rows: 9,
            head_seq: Some(9),
            head_hash: Some("ab".into()),
            csv_sha256: "cd".into(),
            bom: false,
            exported_at: "2026-12-01T00:00:00.000000Z".into(),
            checkpoint: None,
            proofs_file: None,
            proofs_sha256: None,
            signature: None,
        }
    }

    #[test]
    fn a_signed_manifest_verifies_until_a_field_changes() {
        let signer = NoteSigner::generate("toolgate/test").unwrap();
        let mut signed = manifest();
        signed.sign(&signer).unwrap();
        assert!(signed.signed_by(&[signer.verifier()]));
        let json = serde_json::to_string(&signed).unwrap();
        let read: Manifest = serde_json::from_str(&json).unwrap();
        assert!(read.signed_by(&[signer.verifier()]), "the signature survives the file");
        let cut = Manifest { rows: 8, last_seq: Some(8), head_seq: Some(8), ..signed.clone() };
        assert!(!cut.signed_by(&[signer.verifier()]));
        let other = NoteSigner::generate("toolgate/test").unwrap();
        assert!(!signed.signed_by(&[other.verifier()]));
        assert!(!manifest().signed_by(&[signer.verifier()]), "no signature, nothing signed");
    }
}
