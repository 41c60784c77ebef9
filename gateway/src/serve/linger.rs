//! Owns how a connection closes: it stops sending, then reads and throws
//! away what the client is still sending, for a moment, before it lets go.
//!
//! Why: a refusal made before the body is read (a body declared too long, a
//! wrong token) is answered while the client may still be sending that
//! body. Closing a socket that holds unread bytes makes the kernel answer
//! with a reset, and a client still writing then fails with "broken pipe"
//! or "connection reset" instead of reading the 413 that says what went
//! wrong; whether it reads the answer first is a race. Reading on after the
//! answer, as nginx's `lingering_close` and Go's server do, lets the client
//! finish writing and read the answer. Bounded in time and bytes, and
//! nothing read is kept: a client that sends on past either meets the
//! reset it would have met at once.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// How long a closing connection reads on.
const LINGER_FOR: Duration = Duration::from_secs(5);
/// How many bytes a closing connection reads on, at most: three times the
/// largest body a gateway reads (gateway-http's full batch, 5284 KiB).
const LINGER_BYTES: usize = 16 * 1024 * 1024;

/// A TCP stream whose shutdown lingers (see the module's words).
pub(super) struct Lingering {
    stream: TcpStream,
    closing: Closing,
}

enum Closing {
    Open,
    Draining { until: Pin<Box<Sleep>>, left: usize },
    Closed,
}

impl Lingering {
    pub(super) fn new(stream: TcpStream) -> Self {
        Self { stream, closing: Closing::Open }
    }
}

impl AsyncRead for Lingering {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(context, buf)
    }
}

impl AsyncWrite for Lingering {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(context, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(context, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(context)
    }

    /// Sends the end of the stream, then reads until the client ends its
    /// own, [`LINGER_FOR`] passes, or [`LINGER_BYTES`] have been read.
    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            match &mut this.closing {
                Closing::Open => {
                    ready!(Pin::new(&mut this.stream).poll_shutdown(context))?;
                    this.closing = Closing::Draining {
                        until: Box::pin(tokio::time::sleep(LINGER_FOR)),
                        left: LINGER_BYTES,
                    };
                }
                Closing::Draining { until, left } => {
                    if until.as_mut().poll(context).is_ready() {
                        this.closing = Closing::Closed;
                        continue;
                    }
                    let mut scratch = [0u8; 8 * 1024];
                    let mut read = ReadBuf::new(&mut scratch);
                    match ready!(Pin::new(&mut this.stream).poll_read(context, &mut read)) {
                        Ok(()) if !read.filled().is_empty() => {
                            *left = left.saturating_sub(read.filled().len());
                            if *left == 0 {
                                this.closing = Closing::Closed;
                            }
                        }
                        // The client is done, or gone.
                        Ok(()) | Err(_) => this.closing = Closing::Closed,
                    }
                }
                Closing::Closed => return Poll::Ready(Ok(())),
            }
        }
    }
}
