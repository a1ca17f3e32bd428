//! Where the gRPC server listens: a TCP address, or `unix:/path/to.sock` — a socket created
//! with owner-only permissions (`unix_socket_mode`), for sidecars sharing a volume in a pod.
//! Unix connections go through [`LenientAuthority`], so that stock gRPC clients, which name
//! the socket's path as the authority, are served there too.

mod authority;

pub use authority::LenientAuthority;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::net::{TcpListener, UnixListener, UnixStream};

/// A bound listener.
#[derive(Debug)]
pub enum Listener {
    Tcp(TcpListener),
    Unix { listener: UnixListener, path: PathBuf },
}

impl Listener {
    /// Binds `addr`: `unix:/path` or a TCP address. A unix socket gets permissions `mode`; a
    /// stale socket file at the path is replaced.
    pub async fn bind(addr: &str, mode: u32) -> std::io::Result<Self> {
        let Some(path) = unix_path(addr) else {
            return Ok(Self::Tcp(TcpListener::bind(addr).await?));
        };
        if path.exists() && UnixStream::connect(path).await.is_err() {
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        Ok(Self::Unix { listener, path: path.to_owned() })
    }

    /// What it listens on, for the log.
    pub fn describe(&self) -> String {
        match self {
            Self::Tcp(listener) => {
                listener.local_addr().map_or_else(|e| e.to_string(), |a| a.to_string())
            }
            Self::Unix { path, .. } => format!("unix:{}", path.display()),
        }
    }
}

/// The path of a `unix:` address.
pub fn unix_path(addr: &str) -> Option<&Path> {
    addr.strip_prefix("unix:").map(Path::new)
}
