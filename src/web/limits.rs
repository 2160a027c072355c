//! Limits: the size of a request body ([`BodyLimit`], a check), and the requests in flight and
//! the open event streams ([`Slots`], each a tower layer). Each refusal says which limit was
//! hit and the setting that raises it. A request holds its place until its response body ends,
//! so a streamed answer (SSE) counts for as long as it streams.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use futures_util::future::BoxFuture;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::{Layer, Service};

use super::check::Check;
use super::refusal::refusal;

/// The largest body a request may announce (`Content-Length`). A body sent without a length
/// is the service's to bound (rmcp's own limit, given the same number).
#[derive(Debug)]
pub struct BodyLimit {
    max: usize,
    /// The setting that raises it, for the refusal.
    setting: &'static str,
}

impl BodyLimit {
    pub fn new(max: usize, setting: &'static str) -> Self {
        Self { max, setting }
    }

    pub fn max(&self) -> usize {
        self.max
    }
}

impl Check for BodyLimit {
    fn answer(&self, request: &Request) -> Option<Response> {
        let length = request
            .headers()
            .get(header::CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .parse::<u64>()
            .ok()?;
        let max = u64::try_from(self.max).unwrap_or(u64::MAX);
        (length > max).then(|| {
            let message = format!(
                "payload too large: the body has {length} bytes and the limit is {max}; \
                 raise it with {}",
                self.setting
            );
            refusal(StatusCode::PAYLOAD_TOO_LARGE, &message)
        })
    }
}

/// Which requests a [`Slots`] counts.
#[derive(Clone, Copy, Debug)]
pub enum Counted {
    /// Every request but a GET.
    Requests,
    /// GETs: the event streams a client opens to hear from the server.
    Streams,
}

impl Counted {
    fn counts(self, method: &Method) -> bool {
        match self {
            Self::Requests => method != Method::GET,
            Self::Streams => method == Method::GET,
        }
    }

    /// What is at its limit, in a refusal.
    fn what(self) -> &'static str {
        match self {
            Self::Requests => "the requests in flight are",
            Self::Streams => "the open event streams (GET) are",
        }
    }
}

/// One limit on requests at once, and the setting that raises it.
#[derive(Debug)]
pub struct Slots {
    free: Arc<Semaphore>,
    size: u32,
    counted: Counted,
    setting: &'static str,
}

impl Slots {
    pub fn new(counted: Counted, size: u32, setting: &'static str) -> Self {
        let permits = usize::try_from(size).unwrap_or(usize::MAX);
        Self {
            free: Arc::new(Semaphore::new(permits)),
            size,
            counted,
            setting,
        }
    }

    /// Until every slot is free again: every answer has gone out.
    pub async fn all_free(&self) {
        let _all = self.free.acquire_many(self.size).await;
    }

    /// The answer when no slot is free.
    fn busy(&self) -> Response {
        let message = format!(
            "busy: {} already at the limit of {}; try again shortly, or raise it with {}",
            self.counted.what(),
            self.size,
            self.setting
        );
        let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, &message);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }
}

/// The slots as a tower layer: `router.layer(SlotsLayer::new(slots))`.
#[derive(Clone)]
pub struct SlotsLayer(Arc<Slots>);

impl SlotsLayer {
    pub fn new(slots: Arc<Slots>) -> Self {
        Self(slots)
    }
}

impl<S> Layer<S> for SlotsLayer {
    type Service = Slotted<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Slotted {
            slots: self.0.clone(),
            inner,
        }
    }
}

/// The service a [`SlotsLayer`] puts in front of `S`.
#[derive(Clone)]
pub struct Slotted<S> {
    slots: Arc<Slots>,
    inner: S,
}

impl<S> Service<Request> for Slotted<S>
where
    S: Service<Request, Response = Response>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if !self.slots.counted.counts(request.method()) {
            return Box::pin(self.inner.call(request));
        }
        let Ok(slot) = self.slots.free.clone().try_acquire_owned() else {
            let busy = self.slots.busy();
            return Box::pin(async move { Ok(busy) });
        };
        let answer = self.inner.call(request);
        Box::pin(async move {
            let (parts, body) = answer.await?.into_parts();
            Ok(Response::from_parts(
                parts,
                Body::new(Holding { body, _slot: slot }),
            ))
        })
    }
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

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::routing::post;
    use tower::ServiceExt;

    use super::*;
    use crate::web::CheckLayer;

    fn router(slots: &Arc<Slots>) -> Router {
        Router::new()
            .route("/", post(|| async { "answer" }).get(|| async { "stream" }))
            .layer(SlotsLayer::new(slots.clone()))
            .layer(CheckLayer::new(BodyLimit::new(10, "--max-body")))
    }

    fn request(method: Method, length: usize) -> Request {
        Request::builder()
            .method(method)
            .uri("/")
            .header(header::CONTENT_LENGTH, length)
            .body(Body::from(vec![b'x'; length]))
            .unwrap()
    }

    async fn text(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_413_naming_the_setting() {
        let slots = Arc::new(Slots::new(Counted::Requests, 1, "--max-requests"));
        let fits = router(&slots).oneshot(request(Method::POST, 10)).await;
        assert_eq!(fits.unwrap().status(), StatusCode::OK);
        let over = router(&slots)
            .oneshot(request(Method::POST, 11))
            .await
            .unwrap();
        assert_eq!(over.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let said = text(over).await;
        assert!(
            said.contains("11 bytes") && said.contains("--max-body"),
            "{said}"
        );
    }

    /// The slot is the response body's until it is read or dropped, and GETs are not counted.
    #[tokio::test]
    async fn a_request_holds_its_slot_until_its_answer_is_gone() {
        let slots = Arc::new(Slots::new(Counted::Requests, 1, "--max-requests"));
        let first = router(&slots)
            .oneshot(request(Method::POST, 0))
            .await
            .unwrap();
        let busy = router(&slots)
            .oneshot(request(Method::POST, 0))
            .await
            .unwrap();
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers()[header::RETRY_AFTER], "1");
        let said = text(busy).await;
        assert!(
            said.contains("in flight") && said.contains("--max-requests"),
            "{said}"
        );
        let stream = router(&slots).oneshot(request(Method::GET, 0)).await;
        assert_eq!(stream.unwrap().status(), StatusCode::OK);

        assert_eq!(text(first).await, "answer");
        slots.all_free().await;
        let again = router(&slots).oneshot(request(Method::POST, 0)).await;
        assert_eq!(again.unwrap().status(), StatusCode::OK);
    }
}
