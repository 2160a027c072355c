//! A check in front of routes, as a tower layer: it answers a request itself (a refusal) or
//! lets it through to the routes untouched. The Host/Origin guard, the bearer token and the
//! body size are checks; each server puts those it needs around its router.

use std::future::{Ready, ready};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::Either;
use tower::{Layer, Service};

/// What a check decides.
pub trait Check: Send + Sync + 'static {
    /// The answer instead of the routes', if the request must not reach them.
    fn answer(&self, request: &Request) -> Option<Response>;
}

/// A check as a tower layer: `router.layer(CheckLayer::new(check))`.
pub struct CheckLayer<C>(Arc<C>);

impl<C: Check> CheckLayer<C> {
    pub fn new(check: C) -> Self {
        Self(Arc::new(check))
    }

    pub fn check(&self) -> &C {
        &self.0
    }
}

// By hand: a derive would ask `C: Clone`, and the check is shared, not cloned.
impl<C> Clone for CheckLayer<C> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<C, S> Layer<S> for CheckLayer<C> {
    type Service = Checked<C, S>;

    fn layer(&self, inner: S) -> Self::Service {
        Checked {
            check: self.0.clone(),
            inner,
        }
    }
}

/// The service a [`CheckLayer`] puts in front of `S`.
pub struct Checked<C, S> {
    check: Arc<C>,
    inner: S,
}

impl<C, S: Clone> Clone for Checked<C, S> {
    fn clone(&self) -> Self {
        Self {
            check: self.check.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<C, S> Service<Request> for Checked<C, S>
where
    C: Check,
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self.check.answer(&request) {
            Some(answer) => Either::Left(ready(Ok(answer))),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    /// Refuses every path but `/open`.
    struct OnlyOpen;

    impl Check for OnlyOpen {
        fn answer(&self, request: &Request) -> Option<Response> {
            (request.uri().path() != "/open").then(|| StatusCode::IM_A_TEAPOT.into_response())
        }
    }

    async fn status(path: &str) -> StatusCode {
        let router = Router::new()
            .route("/open", get(|| async { "routed" }))
            .route("/shut", get(|| async { "routed" }))
            .layer(CheckLayer::new(OnlyOpen));
        let request = Request::get(path).body(Body::empty()).unwrap();
        router.oneshot(request).await.unwrap().status()
    }

    #[tokio::test]
    async fn a_check_answers_what_it_refuses_and_lets_the_rest_reach_the_routes() {
        assert_eq!(status("/open").await, StatusCode::OK);
        assert_eq!(status("/shut").await, StatusCode::IM_A_TEAPOT);
    }
}
