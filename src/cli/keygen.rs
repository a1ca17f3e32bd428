//! `toolgate keygen`: a new Ed25519 key for signing checkpoints (or, with `--witness`, for
//! cosigning them, in Ed25519 or ML-DSA-44), in the signed-note key format. The signing key goes to a file only its
//! owner may read; the verifier key, for auditors and witnesses, is printed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::Exit;
use crate::trail::cosignature::Cosigner;
use crate::trail::note::NoteSigner;

/// Arguments of `toolgate keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The key's name: the checkpoints' origin (`toolgate/<node id>`), or the witness's name.
    #[arg(long)]
    pub name: String,
    /// A witness's key: print the verifier key of its cosignatures (C2SP tlog-cosignature),
    /// which sidecars list in `[[checkpoints.witnesses]] key`.
    #[arg(long)]
    pub witness: bool,
    /// Where to write the signing key (created with permissions 0600; never overwritten).
    #[arg(long)]
    pub out: PathBuf,
    /// With --witness: the form of its cosignatures, `ed25519` (`cosignature/v1`) or
    /// `ml-dsa-44` (post-quantum, which C2SP tlog-cosignature recommends for new witnesses).
    #[arg(long, value_enum, default_value = "ed25519", requires = "witness")]
    pub algorithm: Algorithm,
}

/// The form of a witness's cosignatures.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Algorithm {
    Ed25519,
    #[value(name = "ml-dsa-44")]
    MlDsa44,
}

/// Writes a new signing key and prints its verifier key.
pub async fn keygen(args: KeygenArgs) -> anyhow::Result<Exit> {
    // The signing key as kept, and the verifier key as printed.
    let (kept, verifier) = match (args.witness, args.algorithm) {
        (false, _) => {
            let signer = NoteSigner::generate(&args.name)?;
            (signer.encode(), signer.verifier().encode())
        }
        (true, Algorithm::Ed25519) => {
            let signer = NoteSigner::generate(&args.name)?;
            (signer.encode(), Cosigner::new(&signer).verifier().encode())
        }
        (true, Algorithm::MlDsa44) => {
            let cosigner = Cosigner::generate_ml_dsa_44(&args.name)?;
            let kept = cosigner.encode_ml_dsa_44().context("an ML-DSA-44 key encodes")?;
            (kept, cosigner.verifier().encode())
        }
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    writeln!(file, "{kept}")?;
    println!("{verifier}");
    Ok(Exit::Ok)
}
