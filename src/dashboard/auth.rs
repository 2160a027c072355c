//! Who may look: the Host header must name the dashboard (DNS rebinding), the printed one-time
//! token is traded for a session cookie (HttpOnly, SameSite=Strict), every page and feed needs
//! that cookie, and a POST also needs the session's CSRF value in a header.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::{Request, State};
use axum::http::header::{COOKIE, HOST, LOCATION, ORIGIN, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};

/// The page a browser without a session gets.
const UNAUTHORIZED: &str = include_str!("assets/unauthorized.html");
/// The header a POST carries the session's CSRF value in.
const CSRF_HEADER: &str = "x-csrf-token";
/// The query parameter of the printed URL.
const TOKEN_PARAM: &str = "token";

/// A random value from the OS, as 64 hex digits.
pub struct Secret(String);

impl Secret {
    pub fn random() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Compared in constant time: how much of a guess matched must not show in the timing.
    fn matches(&self, guess: &str) -> bool {
        let (ours, theirs) = (self.0.as_bytes(), guess.as_bytes());
        ours.len() == theirs.len()
            && ours
                .iter()
                .zip(theirs)
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    }
}

/// The login token and the one session it opens, made up front: logging in cannot fail
/// for want of randomness.
pub struct Access {
    /// The hosts the dashboard answers as (`127.0.0.1:PORT`, `localhost:PORT`).
    hosts: Vec<String>,
    /// Differs between dashboards: cookies do not tell ports apart.
    cookie_name: String,
    token: Secret,
    session: Session,
    /// The token was used: it opens nothing any more.
    used: AtomicBool,
}

struct Session {
    cookie: Secret,
    csrf: Secret,
}

impl Access {
    /// Access for a dashboard answering as `hosts` (`HOST:PORT`, as browsers send them).
    pub fn new(hosts: Vec<String>) -> Result<Self, getrandom::Error> {
        Ok(Self {
            hosts,
            cookie_name: format!("cam_dashboard_{}", &Secret::random()?.as_str()[..12]),
            token: Secret::random()?,
            session: Session {
                cookie: Secret::random()?,
                csrf: Secret::random()?,
            },
            used: AtomicBool::new(false),
        })
    }

    /// The one-time login token, for the printed URL.
    pub fn token(&self) -> &Secret {
        &self.token
    }

    /// The value a POST must carry in [`CSRF_HEADER`], for the pages.
    pub fn csrf(&self) -> &Secret {
        &self.session.csrf
    }

    /// Opens the session if `token` is the login token, unused.
    fn log_in(&self, token: &str) -> Option<&Session> {
        let first = self.token.matches(token)
            && self
                .used
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        first.then_some(&self.session)
    }

    /// The session the request's cookie names, if it names the open one.
    fn session(&self, headers: &HeaderMap) -> Option<&Session> {
        if !self.used.load(Ordering::Acquire) {
            return None;
        }
        let session = &self.session;
        let prefix = format!("{}=", self.cookie_name);
        headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().strip_prefix(&prefix))
            .any(|value| session.cookie.matches(value))
            .then_some(session)
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let host = headers.get(HOST).and_then(|host| host.to_str().ok());
        host.is_some_and(|host| self.hosts.iter().any(|allowed| allowed == host))
    }

    /// A POST from a page of ours: the session's CSRF value in [`CSRF_HEADER`], and
    /// `Origin: http://<host>` (or no Origin, from a client that is not a browser).
    fn may_change(&self, headers: &HeaderMap, session: &Session) -> bool {
        let csrf = headers
            .get(CSRF_HEADER)
            .and_then(|value| value.to_str().ok());
        let origin_ok = match headers.get(ORIGIN).map(|origin| origin.to_str()) {
            None => true,
            Some(Ok(origin)) => self
                .hosts
                .iter()
                .any(|host| origin.strip_prefix("http://") == Some(host.as_str())),
            Some(Err(_)) => false,
        };
        origin_ok && csrf.is_some_and(|csrf| session.csrf.matches(csrf))
    }

    fn set_cookie(&self, session: &Session) -> Option<HeaderValue> {
        HeaderValue::from_str(&format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie_name,
            session.cookie.as_str()
        ))
        .ok()
    }
}

/// The middleware in front of every route.
pub async fn guard(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    if !access.host_allowed(request.headers()) {
        return forbidden("this dashboard answers only at the address it printed");
    }
    if request.uri().path().starts_with("/assets/") {
        return next.run(request).await;
    }
    let session = access.session(request.headers());
    if let Some(token) = login_token(&request) {
        // The printed URL opened again in the browser it logged in: on to the page.
        return match session.or_else(|| access.log_in(token)) {
            Some(session) => logged_in(&access, session),
            None => unauthorized(),
        };
    }
    let Some(session) = session else {
        return unauthorized();
    };
    if !request.method().is_safe() && !access.may_change(request.headers(), session) {
        return forbidden("this request lacks the page's CSRF value: reload the page");
    }
    next.run(request).await
}

/// `?token=…` on the root.
fn login_token(request: &Request) -> Option<&str> {
    if request.uri().path() != "/" {
        return None;
    }
    request.uri().query()?.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        (name == TOKEN_PARAM).then_some(value)
    })
}

/// The cookie set, and on to the page without the token in the address bar.
fn logged_in(access: &Access, session: &Session) -> Response {
    let mut response = (StatusCode::SEE_OTHER, [(LOCATION, "/")]).into_response();
    if let Some(cookie) = access.set_cookie(session) {
        response.headers_mut().insert(SET_COOKIE, cookie);
    }
    response
}

/// No session: the page that says how to get one.
fn unauthorized() -> Response {
    (StatusCode::UNAUTHORIZED, Html(UNAUTHORIZED)).into_response()
}

fn forbidden(why: &'static str) -> Response {
    (StatusCode::FORBIDDEN, why).into_response()
}
