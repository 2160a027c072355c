//! The MCP channel's input, watched for its end.
//!
//! rmcp notices stdin EOF too, but then waits up to 5 s for the calls in flight before it
//! cancels them. A client that closed stdin is gone, so the runs are cancelled at once.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use crate::mcp::{Shutdown, ShutdownCause};

/// An `AsyncRead` that starts the shutdown when its inner reader ends or fails.
pub struct EofWatch<R> {
    inner: R,
    shutdown: Shutdown,
}

impl<R> EofWatch<R> {
    pub fn new(inner: R, shutdown: Shutdown) -> Self {
        Self { inner, shutdown }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EofWatch<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        let ended = match &polled {
            Poll::Ready(Ok(())) => buf.filled().len() == before && buf.remaining() > 0,
            Poll::Ready(Err(error)) => {
                tracing::warn!(%error, "reading the MCP channel failed");
                true
            }
            Poll::Pending => false,
        };
        if ended {
            this.shutdown.trigger(ShutdownCause::StdinClosed);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn the_end_of_input_triggers_the_shutdown_and_data_does_not() {
        let shutdown = Shutdown::for_tests();
        let (mut client, server) = tokio::io::duplex(64);
        let mut reader = EofWatch::new(server, shutdown.clone());
        tokio::io::AsyncWriteExt::write_all(&mut client, b"{}\n")
            .await
            .expect("write");
        let mut buf = [0u8; 16];
        assert_eq!(reader.read(&mut buf).await.expect("read"), 3);
        assert!(!shutdown.is_triggered());
        drop(client);
        assert_eq!(reader.read(&mut buf).await.expect("read"), 0);
        assert!(shutdown.is_triggered());
    }
}
