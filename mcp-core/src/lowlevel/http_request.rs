//! [`HttpRequest`]: the HTTP request a message arrived in, as handlers and middleware see it.

#[cfg(feature = "http")]
mod parts {
    use std::net::SocketAddr;

    use axum::http::{request::Parts, Extensions, HeaderMap, Method, Uri};

    use crate::auth::Principal;

    /// The HTTP request a message arrived in: headers, extensions (what a tower layer in front
    /// put there), the peer's address, and the authenticated [`Principal`].
    ///
    /// `ctx.http()` is `None` on stdio and in memory. The same request parts are seen by a 2025
    /// session's requests (each POST its own) and by a 2026 stateless request.
    ///
    /// ```no_run
    /// # use modelctx_core::lowlevel::RequestContext;
    /// fn tenant(ctx: &RequestContext) -> Option<&str> {
    ///     ctx.http()?.headers().get("x-tenant")?.to_str().ok()
    /// }
    /// ```
    pub struct HttpRequest {
        parts: Parts,
        peer: Option<SocketAddr>,
    }

    /// Headers whose values are credentials: `Debug` shows that they are there, not what they
    /// hold (a handler that logs `ctx.http()` must not log a bearer token).
    const SECRET_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie"];

    impl std::fmt::Debug for HttpRequest {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let headers: Vec<(&str, &str)> = self
                .parts
                .headers
                .iter()
                .map(|(name, value)| {
                    let shown = if SECRET_HEADERS.contains(&name.as_str()) {
                        "<redacted>"
                    } else {
                        value.to_str().unwrap_or("<not text>")
                    };
                    (name.as_str(), shown)
                })
                .collect();
            f.debug_struct("HttpRequest")
                .field("method", &self.parts.method)
                .field("uri", &self.parts.uri)
                .field("headers", &headers)
                .field("peer", &self.peer)
                .field("principal", &self.principal())
                .finish_non_exhaustive()
        }
    }

    impl HttpRequest {
        /// The parts of an HTTP request (its body already read) and the peer's address.
        pub fn new(parts: Parts, peer: Option<SocketAddr>) -> Self {
            Self { parts, peer }
        }

        /// Its header map, taken back once the request has ended (the transport reuses it).
        pub(crate) fn into_headers(self) -> HeaderMap {
            self.parts.headers
        }

        /// The request's headers.
        pub fn headers(&self) -> &HeaderMap {
            &self.parts.headers
        }

        /// The request's extensions: the [`Principal`] and whatever layers in front added.
        pub fn extensions(&self) -> &Extensions {
            &self.parts.extensions
        }

        /// The HTTP method.
        pub fn method(&self) -> &Method {
            &self.parts.method
        }

        /// The request target.
        pub fn uri(&self) -> &Uri {
            &self.parts.uri
        }

        /// The TCP peer, when the server was started with connection info (`serve_http` and
        /// `serve_http_on` always are; a router of your own needs
        /// `into_make_service_with_connect_info::<SocketAddr>()`).
        pub fn peer_addr(&self) -> Option<SocketAddr> {
            self.peer
        }

        /// Who the request comes from, as the resource server's token verifier established it
        /// (`None` when the endpoint is not protected).
        pub fn principal(&self) -> Option<&Principal> {
            self.parts.extensions.get::<Principal>()
        }
    }
}

#[cfg(feature = "http")]
pub use parts::HttpRequest;

/// Without the `http` feature no message arrives over HTTP.
#[cfg(not(feature = "http"))]
#[derive(Debug)]
pub struct HttpRequest {
    _never: std::convert::Infallible,
}
