//! Who may look: the printed one-time token is traded for a session cookie (HttpOnly,
//! SameSite=Strict), every page and feed needs that cookie, and a POST also needs the session's
//! CSRF value in a header. The Host and the Origin are the front's guard's, in front of this
//! ([`guard`]); the cookie and the token come in through extractors.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State};
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use crate::web::{Allowed, Cookies, Guard, Refused, Token, session_cookie};

/// The page a browser without a session gets.
const UNAUTHORIZED: &str = include_str!("assets/unauthorized.html");
/// The header a POST carries the session's CSRF value in.
const CSRF_HEADER: &str = "x-csrf-token";
/// What a request for another host, or from another site's page, is told.
const ELSEWHERE: &str = "this dashboard answers only at the address it printed";

/// The login token and the one session it opens, made up front: logging in cannot fail
/// for want of randomness.
pub struct Access {
    /// Differs between dashboards: cookies do not tell ports apart.
    cookie_name: String,
    token: Token,
    session: Session,
    /// The token was used: it opens nothing any more.
    used: AtomicBool,
}

struct Session {
    cookie: Token,
    csrf: Token,
}

/// The query of the printed URL, `/?token=…`.
#[derive(Deserialize)]
pub struct Login {
    token: Option<String>,
}

impl Access {
    /// A fresh login token, session cookie and CSRF value, and a cookie name of this dashboard.
    pub fn new() -> Result<Self, getrandom::Error> {
        Ok(Self {
            cookie_name: format!("cam_dashboard_{}", &Token::random()?.as_str()[..12]),
            token: Token::random()?,
            session: Session {
                cookie: Token::random()?,
                csrf: Token::random()?,
            },
            used: AtomicBool::new(false),
        })
    }

    /// The one-time login token, for the printed URL.
    pub fn token(&self) -> &Token {
        &self.token
    }

    /// The value a POST must carry in [`CSRF_HEADER`], for the pages.
    pub fn csrf(&self) -> &Token {
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
    fn session(&self, cookies: &Cookies) -> Option<&Session> {
        if !self.used.load(Ordering::Acquire) {
            return None;
        }
        let session = &self.session;
        cookies
            .values(&self.cookie_name)
            .any(|value| session.cookie.matches(value))
            .then_some(session)
    }

    /// A POST from a page of ours: the session's CSRF value in [`CSRF_HEADER`] (the guard has
    /// refused an Origin of another site).
    fn may_change(&self, headers: &HeaderMap, session: &Session) -> bool {
        let csrf = headers
            .get(CSRF_HEADER)
            .and_then(|value| value.to_str().ok());
        csrf.is_some_and(|csrf| session.csrf.matches(csrf))
    }
}

/// The front's guard for a dashboard answering as `hosts` (`HOST:PORT`, as browsers send
/// them): any other Host (DNS rebinding), or an Origin of another site, is refused.
pub fn guard(hosts: Vec<String>) -> Guard {
    Guard::new(Allowed::exactly(hosts), |refused| match refused {
        Refused::NoHost | Refused::Host(_) => (StatusCode::FORBIDDEN, ELSEWHERE.to_owned()),
        Refused::Origin(origin) => (
            StatusCode::FORBIDDEN,
            format!("this dashboard answers only its own pages, not a page of {origin}"),
        ),
    })
}

/// The middleware in front of every route but the assets: the login, the session, the CSRF
/// value of a change.
pub async fn require_session(
    State(access): State<Arc<Access>>,
    cookies: Cookies,
    login: Result<Query<Login>, QueryRejection>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path().starts_with("/assets/") {
        return next.run(request).await;
    }
    let session = access.session(&cookies);
    let login = login.ok().and_then(|Query(login)| login.token);
    if let Some(token) = login.filter(|_| request.uri().path() == "/") {
        // The printed URL opened again in the browser it logged in: on to the page.
        return match session.or_else(|| access.log_in(&token)) {
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

/// The cookie set, and on to the page without the token in the address bar.
fn logged_in(access: &Access, session: &Session) -> Response {
    let mut response = (StatusCode::SEE_OTHER, [(LOCATION, "/")]).into_response();
    if let Ok(cookie) = session_cookie(&access.cookie_name, session.cookie.as_str()) {
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
