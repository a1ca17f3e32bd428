//! The front of a gRPC port: every call is let in or refused on its head alone, before a byte
//! of its body is read, so that a caller without a credential costs no buffering and no
//! decoding; a call let in has its body bounded by what its RPC needs, and a message that
//! stops arriving half way is cut. A call that proved who makes it marks its connection as
//! trusted (see [`Mark`](super::Mark)).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::Extensions;
use http::request::Parts;
use http_body::Frame;
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::Bytes;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo, UdsConnectInfo};

use super::{Mark, Marked};

/// The length prefix of a gRPC message: a compression flag and a big-endian length.
const PREFIX: usize = 5;

/// What a call may bring, once let in.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Whether the call proved who makes it (or auth is off and it is one of the port's own
    /// services): its connection is then kept past the deadline for a trusted call.
    pub trusted: bool,
    /// The largest message the call may send.
    pub max_message: usize,
}

/// Decides, on a call's head (its path, headers and connect info), whether it goes on.
pub trait Door: Send + Sync + 'static {
    /// The call's [`Entry`], or the refusal it is answered with at once (recorded by the door
    /// as it records refusals), its body unread. A door may leave what it learned (who
    /// called) in the head's extensions for the service.
    fn admit<'a>(
        &'a self,
        head: &'a mut Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Entry, Status>> + Send + 'a>>;
}

/// The [`tower::Layer`] that puts a [`Door`] in front of a gRPC router.
#[derive(Clone)]
pub struct FrontLayer {
    door: Arc<dyn Door>,
    stall: Duration,
}

impl std::fmt::Debug for FrontLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontLayer").field("stall", &self.stall).finish_non_exhaustive()
    }
}

impl FrontLayer {
    /// `door` in front; a message begun must not pause longer than `stall` between its
    /// frames.
    pub fn new(door: Arc<dyn Door>, stall: Duration) -> Self {
        Self { door, stall }
    }
}

impl<S> tower::Layer<S> for FrontLayer {
    type Service = Front<S>;

    fn layer(&self, inner: S) -> Front<S> {
        Front { inner, layer: self.clone() }
    }
}

/// A service behind a [`Door`].
#[derive(Debug, Clone)]
pub struct Front<S> {
    inner: S,
    layer: FrontLayer,
}

type Answer<E> = Pin<Box<dyn Future<Output = Result<http::Response<Body>, E>> + Send>>;

impl<S> tower::Service<http::Request<Body>> for Front<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Answer<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The service that was polled ready serves this call; a clone waits for the next.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let layer = self.layer.clone();
        Box::pin(async move {
            let (mut head, body) = request.into_parts();
            let mark = unmark(&mut head.extensions);
            let entry = match layer.door.admit(&mut head).await {
                Ok(entry) => entry,
                Err(refused) => return Ok(refused.into_http()),
            };
            if let (true, Some(mark)) = (entry.trusted, mark) {
                mark.trust();
            }
            let body = Body::new(Bounded::new(body, entry.max_message, layer.stall));
            inner.call(http::Request::from_parts(head, body)).await
        })
    }
}

/// Takes a call's [`Mark`] from its connect info, leaving the connection's own connect info
/// where tonic (`remote_addr`) and the certificate checks look for it.
fn unmark(extensions: &mut Extensions) -> Option<Mark> {
    fn take<T: Clone + Send + Sync + 'static>(extensions: &mut Extensions) -> Option<Mark> {
        let Marked { info, mark } = extensions.remove::<Marked<T>>()?;
        extensions.insert(info);
        Some(mark)
    }
    take::<TcpConnectInfo>(extensions)
        .or_else(|| take::<TlsConnectInfo<TcpConnectInfo>>(extensions))
        .or_else(|| take::<UdsConnectInfo>(extensions))
        .or_else(|| take::<TlsConnectInfo<UdsConnectInfo>>(extensions))
}

/// A call's body, read through: each gRPC message at most `max_message` bytes (refused as
/// soon as its length prefix says more), and cut when `stall` passes without a frame while its
/// first message has not come whole, or a later one has begun and not ended. Between messages
/// a stream may wait as long as its RPC lets it.
struct Bounded {
    inner: Body,
    max_message: usize,
    stall: Duration,
    /// Bytes of the current message's prefix seen so far, and of its payload still to come.
    prefix: Vec<u8>,
    payload_left: usize,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Bounded {
    fn new(inner: Body, max_message: usize, stall: Duration) -> Self {
        Self {
            inner,
            max_message,
            stall,
            prefix: Vec::with_capacity(PREFIX),
            payload_left: 0,
            deadline: Some(Box::pin(tokio::time::sleep(stall))),
        }
    }

    /// Follows the messages through `data`: the error for one over the bound.
    fn follow(&mut self, mut data: &[u8]) -> Result<(), Status> {
        while !data.is_empty() {
            if self.payload_left > 0 {
                let taken = self.payload_left.min(data.len());
                self.payload_left -= taken;
                data = &data[taken..];
                continue;
            }
            let wanted = PREFIX - self.prefix.len();
            let taken = wanted.min(data.len());
            self.prefix.extend_from_slice(&data[..taken]);
            data = &data[taken..];
            if self.prefix.len() == PREFIX {
                let mut length = [0u8; 4];
                length.copy_from_slice(&self.prefix[1..]);
                let length = u32::from_be_bytes(length) as usize;
                if length > self.max_message {
                    return Err(Status::resource_exhausted(format!(
                        "message of {length} bytes: this call takes at most {} bytes",
                        self.max_message
                    )));
                }
                self.prefix.clear();
                self.payload_left = length;
            }
        }
        Ok(())
    }

    /// Whether a message has begun and not ended.
    fn midway(&self) -> bool {
        self.payload_left > 0 || !self.prefix.is_empty()
    }
}

impl http_body::Body for Bounded {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        let Poll::Ready(frame) = polled else {
            let Some(deadline) = this.deadline.as_mut() else { return Poll::Pending };
            ready!(deadline.as_mut().poll(cx));
            return Poll::Ready(Some(Err(Status::deadline_exceeded(format!(
                "the call's message stalled: nothing of it came within {} ms",
                this.stall.as_millis()
            )))));
        };
        if let Some(Ok(frame)) = &frame
            && let Some(data) = frame.data_ref()
        {
            if let Err(refused) = this.follow(data) {
                return Poll::Ready(Some(Err(refused)));
            }
            this.deadline = match this.midway() {
                true => Some(Box::pin(tokio::time::sleep(this.stall))),
                false => None,
            };
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(length: u32) -> Vec<u8> {
        let mut bytes = vec![0];
        bytes.extend_from_slice(&length.to_be_bytes());
        bytes
    }

    #[tokio::test]
    async fn a_message_over_the_bound_is_refused_by_its_prefix_even_split_across_frames() {
        let mut bounded = Bounded::new(Body::empty(), 10, Duration::from_secs(1));
        let mut first = message(10);
        first.extend_from_slice(&[7; 10]);
        bounded.follow(&first).unwrap();
        assert!(!bounded.midway());
        let second = message(11);
        bounded.follow(&second[..2]).unwrap();
        assert!(bounded.midway());
        let refused = bounded.follow(&second[2..]).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    }
}
