//! Bounds on the connections a port holds, so that peers who open connections and say nothing
//! (half-open, unauthenticated, slow) cannot take the file descriptors `Decide` needs: a cap in
//! all and a cap per peer address, taken when a connection is accepted (over the cap it is
//! closed at once), and a deadline for the first bytes of an HTTP/2 connection (its preface:
//! hyper would otherwise wait for it without end). Each port has its own caps, so a flood of
//! one does not close another.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::task::AtomicWaker;
use tokio::io::{AsyncRead, ReadBuf};

/// The bytes of HTTP/2's connection preface.
const PREFACE_BYTES: usize = 24;

/// Raises this process's soft limit on open files to its hard limit (as Go's runtime does), so
/// that the ports' connection caps, not the default of 1,024, bound what peers can hold; warns
/// when the caps of the ports together (`per_port` each, `ports` of them) still exceed it.
pub fn raise_open_files(per_port: usize, ports: usize) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else { return };
    let limit = match soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        true => hard,
        false => soft,
    };
    let wanted = per_port.saturating_mul(ports) as u64;
    if wanted + 256 > limit {
        tracing::warn!(
            open_files = limit,
            max_connections = per_port,
            "[limits] max_connections on every port together exceeds the open files this \
             process may hold: lower it, or raise the limit (ulimit -n)"
        );
    }
}

/// The connections a port holds, against its caps.
#[derive(Debug)]
pub struct Admission {
    max: usize,
    per_peer: usize,
    /// On a gRPC port, how long a connection may hold its room without a call that passed
    /// authentication; `None` on an HTTP/1 port, whose header-read timeout bounds every wait.
    untrusted_for: Option<Duration>,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    all: usize,
    by_peer: HashMap<Option<IpAddr>, Peer>,
}

/// One peer address's connections (a local socket's peers are one, `None`).
#[derive(Debug, Default)]
struct Peer {
    held: usize,
    /// Those that have not yet carried a trusted call, oldest first.
    untrusted: VecDeque<Arc<Slot>>,
}

impl Admission {
    /// An HTTP/1 port's: at most `max` connections in all and `per_peer` from one address;
    /// over either, a new connection is refused.
    pub fn new(max: usize, per_peer: usize) -> Arc<Self> {
        Self::with(max, per_peer, None)
    }

    /// A gRPC port's: at most `max` connections in all, and `per_peer` of one address that
    /// have not yet carried a call that passed authentication ([`Mark::trust`]); each of those
    /// is closed once `untrusted_for` has passed. Over a cap, the oldest untrusted connection
    /// of the peer holding the most of them makes room, so that a peer who floods the port
    /// closes its own connections, not another's, and a new peer always gets in while any
    /// untrusted connection is held. Only trusted connections are never closed for room.
    pub fn guarding(max: usize, per_peer: usize, untrusted_for: Duration) -> Arc<Self> {
        Self::with(max, per_peer, Some(untrusted_for))
    }

    fn with(max: usize, per_peer: usize, untrusted_for: Option<Duration>) -> Arc<Self> {
        let (max, per_peer) = (max.max(1), per_peer.max(1));
        Arc::new(Self { max, per_peer, untrusted_for, held: Mutex::default() })
    }

    /// A connection from `peer` (none for a local socket), if there is room for it.
    pub fn admit(self: &Arc<Self>, peer: Option<IpAddr>) -> Option<Permit> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        match self.untrusted_for {
            None => {
                let of_peer = held.by_peer.get(&peer).map_or(0, |p| p.held);
                if held.all >= self.max || (peer.is_some() && of_peer >= self.per_peer) {
                    return None;
                }
            }
            Some(_) => {
                let of_peer = held.by_peer.get(&peer).map_or(0, |p| p.untrusted.len());
                if of_peer >= self.per_peer {
                    held.evict(peer);
                }
                if held.all >= self.max {
                    let most = held
                        .by_peer
                        .iter()
                        .filter(|(_, p)| !p.untrusted.is_empty())
                        .max_by_key(|(_, p)| p.untrusted.len())
                        .map(|(peer, _)| *peer)?;
                    held.evict(most);
                }
            }
        }
        let slot = Arc::new(Slot {
            admission: self.clone(),
            peer,
            state: AtomicU8::new(UNTRUSTED),
            waker: AtomicWaker::new(),
        });
        let of_peer = held.by_peer.entry(peer).or_default();
        of_peer.held += 1;
        of_peer.untrusted.push_back(slot.clone());
        held.all += 1;
        Some(Permit { slot })
    }

    /// Connections held now.
    pub fn held(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).all
    }
}

impl Held {
    /// Closes `peer`'s oldest untrusted connection: its room is given back at once, and the
    /// connection ends at its next read.
    fn evict(&mut self, peer: Option<IpAddr>) {
        let Some(of_peer) = self.by_peer.get_mut(&peer) else { return };
        let Some(slot) = of_peer.untrusted.pop_front() else { return };
        if slot.state.swap(EVICTED, Ordering::AcqRel) == UNTRUSTED {
            of_peer.held -= 1;
            self.all -= 1;
            if of_peer.held == 0 {
                self.by_peer.remove(&peer);
            }
        }
        slot.waker.wake();
    }
}

const UNTRUSTED: u8 = 0;
const TRUSTED: u8 = 1;
const EVICTED: u8 = 2;

/// One connection's room in its port's [`Admission`].
#[derive(Debug)]
struct Slot {
    admission: Arc<Admission>,
    peer: Option<IpAddr>,
    state: AtomicU8,
    /// The connection's reader, woken when the connection is evicted.
    waker: AtomicWaker,
}

impl Slot {
    /// Gives the room back (once: an evicted connection's was given back when it was evicted).
    fn release(self: &Arc<Self>, trusted: bool) {
        let mut held = self.admission.held.lock().unwrap_or_else(PoisonError::into_inner);
        let held = &mut *held;
        let Some(of_peer) = held.by_peer.get_mut(&self.peer) else { return };
        of_peer.untrusted.retain(|slot| !Arc::ptr_eq(slot, self));
        if !trusted {
            return;
        }
        held.all -= 1;
        of_peer.held -= 1;
        if of_peer.held == 0 {
            held.by_peer.remove(&self.peer);
        }
    }
}

/// A connection's room, given back when it closes.
#[derive(Debug)]
pub struct Permit {
    slot: Arc<Slot>,
}

impl Permit {
    /// What marks this connection as one that carried a trusted call.
    pub fn mark(&self) -> Mark {
        Mark(self.slot.clone())
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        // An evicted connection's room went back when it was evicted.
        let holds_room = self.slot.state.load(Ordering::Acquire) != EVICTED;
        self.slot.release(holds_room);
    }
}

/// Marks a connection as one that carried a call that passed authentication: it then counts
/// no longer against its peer's untrusted connections, and is kept past their deadline.
#[derive(Debug, Clone)]
pub struct Mark(Arc<Slot>);

impl Mark {
    /// The connection carried a trusted call.
    pub fn trust(&self) {
        let slot = &self.0;
        if slot
            .state
            .compare_exchange(UNTRUSTED, TRUSTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            slot.release(false);
        }
    }
}

/// An accepted connection holding its [`Permit`]: on a gRPC port, closed when it is evicted to
/// make room, or when its deadline for a trusted call passes.
#[derive(Debug)]
pub struct Limited<S> {
    inner: S,
    permit: Permit,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> Limited<S> {
    pub fn new(inner: S, permit: Permit) -> Self {
        let deadline =
            permit.slot.admission.untrusted_for.map(|within| Box::pin(tokio::time::sleep(within)));
        Self { inner, permit, deadline }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// See [`Permit::mark`].
    pub fn mark(&self) -> Mark {
        self.permit.mark()
    }
}

/// A connection whose first bytes (HTTP/2's preface) must come within a deadline; its calls
/// carry its [`Mark`] (in [`Marked`] connect info), so that the port's front can trust it.
#[derive(Debug)]
pub struct Preface<S> {
    inner: S,
    left: usize,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    mark: Mark,
}

impl<S> Preface<S> {
    /// `inner` (whose room `mark` marks), closed with an error if its preface has not come
    /// within `within`.
    pub fn new(mark: Mark, inner: S, within: Duration) -> Self {
        let deadline = Some(Box::pin(tokio::time::sleep(within)));
        Self { inner, left: PREFACE_BYTES, deadline, mark }
    }
}

/// A connection's own connect info, and its [`Mark`].
#[derive(Debug, Clone)]
pub struct Marked<T> {
    pub info: T,
    pub mark: Mark,
}

impl<S: tonic::transport::server::Connected> tonic::transport::server::Connected for Preface<S> {
    type ConnectInfo = Marked<S::ConnectInfo>;

    fn connect_info(&self) -> Self::ConnectInfo {
        Marked { info: self.inner.connect_info(), mark: self.mark.clone() }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Limited<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(deadline) = this.deadline.as_mut() {
            // Registered before the state is read: an eviction after the read wakes this.
            this.permit.slot.waker.register(cx.waker());
            match this.permit.slot.state.load(Ordering::Acquire) {
                TRUSTED => this.deadline = None,
                EVICTED => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "closed to make room: the peer holds too many connections without a call",
                    )));
                }
                _ if deadline.as_mut().poll(cx).is_ready() => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no authenticated call within the deadline",
                    )));
                }
                _ => {}
            }
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}
impl<S: AsyncRead + Unpin> AsyncRead for Preface<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if self.deadline.is_none() {
            return read;
        }
        match read {
            Poll::Ready(Ok(())) => {
                let got = buf.filled().len() - before;
                self.left = self.left.saturating_sub(got);
                if self.left == 0 {
                    self.deadline = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match self.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no HTTP/2 preface within the handshake timeout",
                ))),
                _ => Poll::Pending,
            },
            other => other,
        }
    }
}

super::writes_through!(Limited);
super::connects_through!(Limited);
super::writes_through!(Preface);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_capped_in_all_and_per_peer_and_given_back() {
        let admission = Admission::new(3, 2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let first = admission.admit(Some(a)).unwrap();
        let _second = admission.admit(Some(a)).unwrap();
        assert!(admission.admit(Some(a)).is_none(), "per peer");
        let _third = admission.admit(Some(b)).unwrap();
        assert!(admission.admit(None).is_none(), "in all");
        drop(first);
        assert!(admission.admit(Some(a)).is_some());
    }

    #[tokio::test]
    async fn a_connection_without_its_preface_is_closed_at_the_deadline() {
        use tokio::io::AsyncReadExt;
        let (client, server) = tokio::io::duplex(64);
        let admission = Admission::new(1, 1);
        let mark = admission.admit(None).unwrap().mark();
        let mut guarded = Preface::new(mark, server, Duration::from_millis(50));
        let mut buf = [0u8; 8];
        let read = guarded.read(&mut buf).await;
        assert_eq!(read.unwrap_err().kind(), io::ErrorKind::TimedOut);
        drop(client);
    }
}
