//! Limits: the size of a request body, the requests in flight and the open event streams.
//! Each refusal says which limit was hit and the setting that raises it. A request holds its
//! place until its response body ends, so a streamed answer (SSE) counts for as long as it
//! streams.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::refusal::refusal;

/// One limit on things at once, and the setting that raises it.
#[derive(Debug)]
struct Slots {
    free: Arc<Semaphore>,
    size: u32,
    what: &'static str,
    setting: &'static str,
}

impl Slots {
    fn new(size: u32, what: &'static str, setting: &'static str) -> Self {
        let permits = usize::try_from(size).unwrap_or(usize::MAX);
        Self {
            free: Arc::new(Semaphore::new(permits)),
            size,
            what,
            setting,
        }
    }

    fn take(&self) -> Option<OwnedSemaphorePermit> {
        self.free.clone().try_acquire_owned().ok()
    }

    /// The answer when no slot is free.
    fn busy(&self) -> Response {
        let message = format!(
            "busy: {} already at the limit of {}; try again shortly, or raise it with {}",
            self.what, self.size, self.setting
        );
        let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, &message);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }

    /// Until every slot is free again.
    async fn all_free(&self) {
        let _all = self.free.acquire_many(self.size).await;
    }
}

#[derive(Debug)]
pub struct Limits {
    max_body_bytes: usize,
    requests: Slots,
    streams: Slots,
}

impl Limits {
    pub fn new(max_body_bytes: usize, max_requests: u32, max_streams: u32) -> Self {
        Self {
            max_body_bytes,
            requests: Slots::new(
                max_requests,
                "the requests in flight are",
                "--http-max-requests or CAM_HTTP_MAX_REQUESTS",
            ),
            streams: Slots::new(
                max_streams,
                "the open event streams (GET) are",
                "--http-max-streams or CAM_HTTP_MAX_STREAMS",
            ),
        }
    }

    /// rmcp applies it too, to bodies sent without a length.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// Until no request is in flight: every answer has gone out.
    pub async fn requests_done(&self) {
        self.requests.all_free().await;
    }

    fn too_large(&self, request: &Request) -> Option<Response> {
        let length = request
            .headers()
            .get(header::CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .parse::<u64>()
            .ok()?;
        let max = u64::try_from(self.max_body_bytes).unwrap_or(u64::MAX);
        (length > max).then(|| {
            let message = format!(
                "payload too large: the body has {length} bytes and the limit is {max}; \
                 raise it with --http-max-body-bytes or CAM_HTTP_MAX_BODY_BYTES"
            );
            refusal(StatusCode::PAYLOAD_TOO_LARGE, &message)
        })
    }
}

/// The middleware: refuse what is over a limit; let the rest through, holding a slot.
pub async fn enforce(State(limits): State<Arc<Limits>>, request: Request, next: Next) -> Response {
    if let Some(refused) = limits.too_large(&request) {
        return refused;
    }
    let slots = if request.method() == Method::GET {
        &limits.streams
    } else {
        &limits.requests
    };
    let Some(slot) = slots.take() else {
        return slots.busy();
    };
    let (parts, body) = next.run(request).await.into_parts();
    Response::from_parts(parts, Body::new(Holding { body, _slot: slot }))
}

/// A response body that keeps its request's slot until it ends or is dropped.
struct Holding {
    body: Body,
    _slot: OwnedSemaphorePermit,
}

impl HttpBody for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
