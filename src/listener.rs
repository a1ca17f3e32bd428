//! Where the gRPC server listens: a TCP address, or `unix:/path/to.sock` — a socket created
//! with owner-only permissions (`unix_socket_mode`), for sidecars sharing a volume in a pod.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, UnixListener, UnixStream};
use tonic::transport::{Channel, Endpoint};

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

    /// A lazy channel to this listener, for the server's own side port.
    pub fn channel(&self) -> std::io::Result<Channel> {
        match self {
            Self::Tcp(listener) => {
                let mut addr = listener.local_addr()?;
                if addr.ip().is_unspecified() {
                    addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
                }
                // INVARIANT: a socket address makes a valid URI.
                let endpoint =
                    Endpoint::from_shared(format!("http://{addr}")).expect("a valid URI");
                Ok(endpoint.connect_lazy())
            }
            Self::Unix { path, .. } => Ok(unix_channel(path)),
        }
    }
}

/// The path of a `unix:` address.
pub fn unix_path(addr: &str) -> Option<&Path> {
    addr.strip_prefix("unix:").map(Path::new)
}

/// A lazy channel over a unix socket.
pub fn unix_channel(path: &Path) -> Channel {
    let path = path.to_owned();
    // INVARIANT: a constant, valid URI; the connector ignores it.
    Endpoint::from_static("http://localhost").connect_with_connector_lazy(tower::service_fn(
        move |_| {
            let path = path.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?)) }
        },
    ))
}
