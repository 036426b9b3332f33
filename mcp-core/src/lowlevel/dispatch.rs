//! One message through the engine: era classification, middleware, the table, stamping.

use std::sync::Arc;

use serde_json::Value;

use tracing::Instrument as _;

use super::detach::Detach;
use super::reply::Reply;
use super::round::{Round, INPUT_METHODS};
use super::span::CallSpan;
use super::stamp::stamp_modern;
use super::unwind::CatchUnwind;
use super::url_elicitation as url;
use super::RunningServer;
use crate::era::{self, Era, MODERN_ONLY, REMOVED_IN_MODERN};
use crate::error::McpError;
use crate::jsonrpc::{self, RequestId};
use crate::lowlevel::{
    CallInfo, Incoming, Next, NotificationContext, Params, RequestContext, Session, SessionHook,
};
use crate::raw_meta::RawMeta;
use crate::types::{
    ClientCapabilities, InitializeRequestParams, InitializeResult, SetLevelRequestParams,
};

/// Where a message came from and where its answers go.
pub(crate) struct Origin<'a, S> {
    pub(crate) server: &'a Arc<RunningServer<S>>,
    /// The connection's or 2025 HTTP session's record; `None` for a 2026 request that stands
    /// alone (over HTTP, or through `RunningServer::handle_message`).
    pub(crate) session: Option<&'a Session>,
    pub(crate) sink: &'a crate::lowlevel::Sink,
    pub(crate) surface_internal: bool,
    /// The HTTP request the message arrived in.
    pub(crate) http: Option<Arc<crate::lowlevel::HttpRequest>>,
}

/// A request's answer as the transport sends it: the encoded response line, and the JSON-RPC
/// error code when it is an error (so no transport ever parses an answer).
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) line: String,
    /// Read by the HTTP transport (its status).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) error: Option<i32>,
}

impl Answer {
    fn result(line: String) -> Self {
        Self { line, error: None }
    }

    /// An error answer (internal failures logged; their detail never reaches the wire unless
    /// `surface_internal` is set).
    pub(crate) fn error(
        id: Option<&RequestId>,
        method: &str,
        e: &McpError,
        surface_internal: bool,
    ) -> Self {
        Self {
            line: error_line(id, method, e, surface_internal),
            error: Some(e.code()),
        }
    }
}

/// What a transport already read of a request, so the engine does not read it again.
#[derive(Default)]
pub(crate) struct Read {
    /// `params._meta`.
    pub(crate) meta: Option<RawMeta>,
    /// Its 2026 envelope, validated (`None`: not read yet).
    pub(crate) envelope: Option<era::RequestEnvelope>,
}

/// Serves one request and returns its answer.
pub(crate) async fn handle_request<S: Send + Sync + 'static>(
    origin: Origin<'_, S>,
    id: RequestId,
    method: crate::jsonrpc::Method,
    mut params: Params,
) -> Answer {
    let read = Read {
        meta: params.raw_meta(),
        envelope: None,
    };
    handle_read_request(origin, id, method, params, read).await
}

/// [`handle_request`] for a transport that already read `params._meta` and its envelope, so
/// neither is read twice.
pub(crate) async fn handle_read_request<S: Send + Sync + 'static>(
    origin: Origin<'_, S>,
    id: RequestId,
    method: crate::jsonrpc::Method,
    params: Params,
    read: Read,
) -> Answer {
    let (span, info, run) = match start_request(&origin, &id, method, params, read) {
        Ok(started) => started,
        Err(answer) => return answer,
    };
    let outcome = run.await;
    match &outcome {
        Ok(Ok(reply)) => span.succeeded(reply.is_error()),
        Ok(Err(e)) => span.failed(e.code()),
        Err(_) => span.failed(crate::error::codes::INTERNAL_ERROR),
    }
    // The 2026 envelope, encoded once at start, is written around an encoded result (one
    // reaches this point only when its method has such an envelope: see `innermost`).
    let tail = || match info.era {
        Era::Modern => origin.server.stamp_tail(&info.method).unwrap_or_default(),
        Era::Legacy => "",
    };
    let line = match outcome {
        Ok(Ok(Reply::Encoded(encoded))) => {
            jsonrpc::encode_result_with_members(&id, &[&encoded.text], tail())
        }
        Ok(Ok(Reply::Prebuilt { field, value })) => jsonrpc::encode_result_with_members(
            &id,
            &["{\"", field, "\":", value.get(), "}"],
            tail(),
        ),
        Ok(Ok(Reply::Value(mut value))) => {
            if info.era == Era::Modern {
                // A middleware owns what it returns (it may strip the serverInfo stamp), but a
                // 2026 result always says what it is.
                ensure_result_type(&mut value);
            }
            jsonrpc::encode_result(&id, &value)
        }
        Ok(Err(e)) => return Answer::error(Some(&id), &info.method, &e, origin.surface_internal),
        Err(panic) => {
            let e = McpError::internal(format!("handler panicked: {panic}"));
            return Answer::error(Some(&id), &info.method, &e, origin.surface_internal);
        }
    };
    Answer::result(line)
}

/// What runs a request, and what `handle_read_request` needs of it when it ends.
type Started<S> = (
    CallSpan,
    Arc<CallInfo<S>>,
    Detach<Result<Reply, McpError>, S>,
);

/// Everything before a request's handler runs: its span, its call info, and the future that
/// runs it (or the answer when it is refused). A plain function, so its locals (the call info
/// as it is built, several hundred bytes) take no room in the request's future, which a
/// connection boxes once per request.
fn start_request<S: Send + Sync + 'static>(
    origin: &Origin<'_, S>,
    id: &RequestId,
    method: crate::jsonrpc::Method,
    params: Params,
    read: Read,
) -> Result<Started<S>, Answer> {
    let span = CallSpan::request(id, &method, &params, read.meta.as_ref());
    let classified = {
        let _in = span.span().enter();
        classify(origin, id, method, read)
    };
    let info = match classified {
        Ok(info) => info,
        Err((method, e)) => {
            span.failed(e.code());
            return Err(Answer::error(
                Some(id),
                &method,
                &e,
                origin.surface_internal,
            ));
        }
    };
    span.describe(&info);
    let info = Arc::new(info);
    let msg = Incoming {
        info: info.clone(),
        params,
    };
    let grace = origin.server.server.options.shutdown_grace;
    // Without middleware nobody needs to see the result as a value: an encoded one goes to the
    // wire as it is.
    let run: crate::lowlevel::BoxFuture<Result<Reply, McpError>> =
        if origin.server.middleware().is_empty() {
            Box::pin(innermost(msg))
        } else {
            let chain = next(0).run(msg);
            let info = info.clone();
            Box::pin(async move {
                match chain.await {
                    Ok(value) => Ok(Reply::Value(value)),
                    // What a middleware raises is sent as the client's era wants it, like a
                    // handler's error (`-32042` becomes an input request on 2026).
                    Err(e) => match RequestContext::new(info.clone()) {
                        Some(ctx) => paused(e, &ctx, &info).map(Reply::Value),
                        None => Err(e),
                    },
                }
            })
        };
    let handler = CatchUnwind::new(instrument(run, &span));
    let detach = Detach::new(handler, info.clone(), grace);
    Ok((span, info, detach))
}

fn ensure_result_type(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.entry("resultType")
                .or_insert_with(|| Value::from("complete"));
        }
        other => {
            let mut map = serde_json::Map::new();
            map.insert("resultType".into(), Value::from("complete"));
            if !other.is_null() {
                tracing::warn!("a middleware answered with a non-object result; replaced by {{}}");
            }
            *other = Value::Object(map);
        }
    }
}

/// Serves one notification (never answered; failures are logged).
pub(crate) async fn handle_notification<S: Send + Sync + 'static>(
    origin: Origin<'_, S>,
    method: crate::jsonrpc::Method,
    mut params: Params,
) {
    let meta = params.raw_meta();
    let span = CallSpan::notification(&method, &params, meta.as_ref());
    if let (Some(session), "notifications/initialized") = (origin.session, &*method) {
        session.mark_initialized_notified();
    }
    // A notification is never answered: inside a 2025 session its 2026 envelope (if any) is
    // ignored and it is served with the session's settings (one session, one era).
    let envelope = match origin.session.is_some_and(Session::is_initialized) {
        true => None,
        false => origin.server.envelopes.read(meta.as_ref()),
    };
    let info = match envelope {
        Some(Ok(env)) => modern_call(&origin, None, method, meta, env),
        _ => session_call(&origin, None, method, meta),
    };
    span.describe(&info);
    let method = info.method.clone();
    let msg = Incoming {
        info: Arc::new(info),
        params,
    };
    match CatchUnwind::new(instrument(next(0).run(msg), &span)).await {
        Ok(Ok(value)) => span.succeeded(value.get("isError") == Some(&Value::Bool(true))),
        Ok(Err(e)) => {
            span.failed(e.code());
            let _in = span.span().enter();
            tracing::warn!(method = &*method, error = %e, "notification handler failed");
        }
        Err(panic) => {
            span.failed(crate::error::codes::INTERNAL_ERROR);
            let _in = span.span().enter();
            tracing::error!(method = &*method, panic, "notification handler panicked");
        }
    }
}

/// `run` inside `span` (boxed once more only when a subscriber wants the span).
fn instrument<T: Send + 'static>(
    run: crate::lowlevel::BoxFuture<T>,
    span: &CallSpan,
) -> crate::lowlevel::BoxFuture<T> {
    if span.is_disabled() {
        return run;
    }
    Box::pin(run.instrument(span.span().clone()))
}

fn next<S: Send + Sync + 'static>(index: usize) -> Next<S> {
    Next {
        index,
        _state: std::marker::PhantomData,
    }
}

/// Decides the era of a request and gathers what its context needs, in the order of the spec:
/// a 2026 envelope is validated first (-32602, -32022), then removed methods (-32601).
///
/// One session, one era: inside a session opened by `initialize` (2025, on any transport) a
/// request whose `_meta` carries a 2026 envelope is refused with `-32600` before its envelope
/// is read; it would otherwise be served with another era's semantics (and another client's
/// identity and capabilities) in the middle of a 2025 conversation. The other way round is
/// allowed on a connection: a client may probe with a 2026 request and, when it must, fall back
/// to `initialize`, which then fixes the connection's era to 2025.
fn classify<S: Send + Sync + 'static>(
    origin: &Origin<'_, S>,
    id: &RequestId,
    method: crate::jsonrpc::Method,
    read: Read,
) -> Result<CallInfo<S>, (crate::jsonrpc::Method, McpError)> {
    let Read { meta, envelope } = read;
    let initialized = origin.session.filter(|s| s.is_initialized());
    if let Some(session) = initialized.filter(|_| era::carries_modern_envelope(meta.as_ref())) {
        let e = McpError::invalid_request(format!(
            "Invalid request: this is a {} session opened by initialize; a request carrying a \
             {} _meta envelope cannot be served in it",
            session
                .protocol_version()
                .unwrap_or_else(|| era::LATEST_LEGACY_VERSION.into()),
            era::LATEST_PROTOCOL_VERSION,
        ));
        return Err((method, e));
    }
    let envelope = match envelope {
        Some(envelope) => Some(Ok(envelope)),
        None => origin.server.envelopes.read(meta.as_ref()),
    };
    match envelope {
        Some(Err(e)) => Err((method, e)),
        Some(Ok(env)) => {
            if REMOVED_IN_MODERN.contains(&&*method) {
                let e = McpError::method_not_found(&method);
                return Err((method, e));
            }
            // A connection (stdio, in memory) is opened by its first 2026 request; a request
            // that stands alone has no session to open and runs no session hooks.
            if let Some(session) = origin.session {
                session.open(
                    Era::Modern,
                    &env.protocol_version,
                    env.client_info.as_ref(),
                    &env.client_capabilities,
                );
                if session.begin() {
                    run_hooks(&origin.server.server.on_connect, session);
                }
            }
            Ok(modern_call(origin, Some(id.clone()), method, meta, env))
        }
        None if method == "initialize" || method == "ping" => {
            Ok(session_call(origin, Some(id.clone()), method, meta))
        }
        None if initialized.is_some() => {
            if MODERN_ONLY.contains(&&*method) {
                let e = McpError::method_not_found(&method);
                return Err((method, e));
            }
            Ok(session_call(origin, Some(id.clone()), method, meta))
        }
        None => {
            let e = match meta {
                Some(_) => McpError::invalid_params(format!(
                    "Invalid _meta: missing required {}",
                    era::META_PROTOCOL_VERSION
                )),
                None => McpError::invalid_params(
                    "Missing _meta: a 2026-07-28 request must carry params._meta with the protocol \
                     version and client capabilities; a 2025 client must send initialize first",
                ),
            };
            Err((method, e))
        }
    }
}

/// The context of a 2026 message: everything comes from its own envelope.
fn modern_call<S>(
    origin: &Origin<'_, S>,
    id: Option<RequestId>,
    method: crate::jsonrpc::Method,
    meta: Option<RawMeta>,
    env: era::RequestEnvelope,
) -> CallInfo<S> {
    CallInfo {
        id,
        method,
        meta,
        era: Era::Modern,
        protocol_version: env.protocol_version,
        client_capabilities: env.client_capabilities,
        client_info: env.client_info,
        log_level: env.log_level,
        session: origin.session.cloned(),
        server: origin.server.clone(),
        sink: origin.sink.clone(),
        http: origin.http.clone(),
        round: Default::default(),
        kept: Default::default(),
        cancel: Default::default(),
        last_progress: Default::default(),
    }
}

/// The context of a message served with the session's (2025) settings.
fn session_call<S>(
    origin: &Origin<'_, S>,
    id: Option<RequestId>,
    method: crate::jsonrpc::Method,
    meta: Option<RawMeta>,
) -> CallInfo<S> {
    let session = origin.session;
    CallInfo {
        id,
        method,
        meta,
        era: Era::Legacy,
        protocol_version: session
            .and_then(Session::protocol_version)
            .unwrap_or_else(|| era::LATEST_LEGACY_VERSION.into()),
        client_capabilities: session
            .map(Session::client_capabilities)
            .unwrap_or_default(),
        client_info: session.and_then(Session::client_info),
        log_level: None,
        session: session.cloned(),
        server: origin.server.clone(),
        sink: origin.sink.clone(),
        http: origin.http.clone(),
        round: Default::default(),
        kept: Default::default(),
        cancel: Default::default(),
        last_progress: Default::default(),
    }
}

/// The end of the middleware chain: the engine's own methods, then the handler table. A
/// 2026 result comes back stamped, unless it is still encoded (then the stamp is written
/// around it when the answer is encoded; see [`materialize`] for who needs it as a value).
pub(crate) async fn innermost<S: Send + Sync + 'static>(
    msg: Incoming<S>,
) -> Result<Reply, McpError> {
    let Incoming { info, params } = msg;
    let server = info.server.clone();
    let Some(ctx) = RequestContext::new(info.clone()) else {
        if let Some(handler) = server.server.notifications.get(&*info.method) {
            handler(NotificationContext { info }, params).await?;
        }
        return Ok(Reply::Value(Value::Null));
    };
    if info.method == "initialize" {
        return initialize(&info, &params).map(Reply::Value);
    }
    let handler = server
        .server
        .requests
        .get(&*info.method)
        .ok_or_else(|| McpError::method_not_found(&info.method))?;
    if info.method == "logging/setLevel" {
        let p: SetLevelRequestParams = params.decode()?;
        if let Some(session) = &info.session {
            session.set_log_level(p.level);
        }
    }
    if info.era == Era::Legacy {
        return handler(ctx.clone(), params)
            .await
            .map_err(|e| url::for_client(e, &ctx));
    }
    let sealer = server.server.sealer.as_ref();
    // A request that is no retry, to a server that seals nothing, has no round to keep; to
    // one that seals, only its params (their text, shared).
    if INPUT_METHODS.contains(&&*info.method) {
        let retry = params.may_be_a_retry();
        match params.shared_text() {
            Some(text) if !retry && sealer.is_some() => {
                let _ = info.kept.set(text);
            }
            _ if retry || sealer.is_some() => {
                let round = Round::begin(&info.method, &params, sealer, caller(&info))?;
                let _ = info.round.set(Box::new(round));
            }
            _ => {}
        }
    }
    let reply = match handler(ctx.clone(), params).await {
        Ok(reply) => reply,
        Err(e) => return paused(e, &ctx, &info).map(Reply::Value),
    };
    let mut value = match reply {
        Reply::Value(value) => value,
        // Stamped when it is written, unless its method's stamp is not the same every time.
        encoded if server.stamp_tail(&info.method).is_some() => return Ok(encoded),
        encoded => encoded.into_value(),
    };
    seal_and_stamp(&info, &mut value)?;
    Ok(Reply::Value(value))
}

/// A handler's or middleware's error as this request's client gets it: in a 2025 session the
/// error itself (a URL elicitation refused with `-32021` to a client that cannot show one);
/// on 2026 a pause for input (`McpError::input_required`, or a `-32042` rewritten as an input
/// request) becomes the sealed and stamped `input_required` result, from the three methods
/// that may pause.
fn paused<S: Send + Sync + 'static>(
    e: McpError,
    ctx: &RequestContext<S>,
    info: &CallInfo<S>,
) -> Result<Value, McpError> {
    let e = url::for_client(e, ctx);
    if info.era == Era::Legacy {
        return Err(e);
    }
    let paused = e.into_input_required()?;
    if !INPUT_METHODS.contains(&&*info.method) {
        return Err(McpError::internal(format!(
            "{} asked the client for input; only tools/call, prompts/get and resources/read may",
            info.method
        )));
    }
    let mut value = serde_json::to_value(paused)?;
    seal_and_stamp(info, &mut value)?;
    Ok(value)
}

/// Seals an `input_required` result's state (when the server seals and the round began) and
/// stamps the 2026 envelope.
fn seal_and_stamp<S>(info: &CallInfo<S>, value: &mut Value) -> Result<(), McpError> {
    if let (true, Some(sealer)) = (
        value.get("resultType") == Some(&Value::from("input_required")),
        info.server.server.sealer.as_ref(),
    ) {
        match (info.round.get(), info.kept.get()) {
            (Some(round), _) => round.seal(sealer, &info.method, value)?,
            (None, Some(text)) => {
                let params = Params::from_shared(text.clone());
                Round::begin(&info.method, &params, Some(sealer), caller(info))?.seal(
                    sealer,
                    &info.method,
                    value,
                )?;
            }
            (None, None) => {}
        }
    }
    let id = info.id.clone().unwrap_or(RequestId::Number(0));
    stamp_modern(&info.server.server, &info.method, &id, value);
    Ok(())
}

/// The result of [`innermost`] as the value a middleware sees: stamped for 2026.
pub(crate) fn materialize<S>(reply: Reply, info: &CallInfo<S>) -> Value {
    match reply {
        Reply::Value(value) => value,
        encoded => {
            let mut value = encoded.into_value();
            if info.era == Era::Modern {
                let id = info.id.clone().unwrap_or(RequestId::Number(0));
                stamp_modern(&info.server.server, &info.method, &id, &mut value);
            }
            value
        }
    }
}

/// The identity of the principal a request comes from, when the endpoint is protected.
fn caller<S>(info: &CallInfo<S>) -> Option<String> {
    #[cfg(feature = "http")]
    {
        info.http.as_deref()?.principal().map(|p| p.identity())
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = info;
        None
    }
}

fn initialize<S: Send + Sync + 'static>(
    info: &CallInfo<S>,
    params: &Params,
) -> Result<Value, McpError> {
    if info.session.as_ref().is_some_and(Session::is_initialized) {
        return Err(McpError::invalid_request(
            "Invalid request: this session is already initialized",
        ));
    }
    let p: InitializeRequestParams = params.decode()?;
    let version = era::negotiate_legacy_version(&p.protocol_version);
    // Without a session (a message served alone) the handshake is answered and kept nowhere.
    if let Some(session) = &info.session {
        session.open(
            Era::Legacy,
            &version.into(),
            Some(&Arc::new(p.client_info)),
            &Arc::new(ClientCapabilities::clone(&p.capabilities)),
        );
    }
    let result = InitializeResult {
        protocol_version: version.to_owned(),
        capabilities: info.server.capabilities().clone(),
        server_info: info.server.info().clone(),
        instructions: info.server.instructions().map(str::to_owned),
        meta: None,
    };
    Ok(serde_json::to_value(result)?)
}

/// Runs session hooks, containing a panic in any of them.
pub(crate) fn run_hooks(hooks: &[SessionHook], session: &Session) {
    for hook in hooks {
        let session = session.clone();
        if let Err(payload) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(session)))
        {
            let panic = super::unwind::panic_message(payload);
            tracing::error!(panic, "session hook panicked");
        }
    }
}

/// Runs the server's close hooks for `session` once its handlers ended, cancelled ones'
/// cleanups included (waiting at most the shutdown grace, the longest a cleanup may run).
pub(crate) async fn run_close_hooks<S: Send + Sync + 'static>(
    server: &RunningServer<S>,
    session: &Session,
) {
    let grace = server.server.options.shutdown_grace;
    if tokio::time::timeout(grace, session.idle()).await.is_err() {
        tracing::debug!("handlers still running past the shutdown grace; closing anyway");
    }
    run_hooks(&server.server.on_close, session);
}

/// [`run_close_hooks`] from code that cannot wait: at once when no handler of the session is
/// at work, else from a task of its own.
#[cfg(feature = "http")]
pub(crate) fn close_hooks_soon<S: Send + Sync + 'static>(
    server: &Arc<RunningServer<S>>,
    session: &Session,
) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) if session.busy() => {
            let (server, session) = (server.clone(), session.clone());
            runtime.spawn(async move { run_close_hooks(&server, &session).await });
        }
        _ => run_hooks(&server.server.on_close, session),
    }
}

/// Encodes an error response, logging internal failures (whose detail never reaches the wire
/// unless `surface_internal` is set).
pub(crate) fn error_line(
    id: Option<&RequestId>,
    method: &str,
    e: &McpError,
    surface_internal: bool,
) -> String {
    if e.is_internal() {
        tracing::error!(method, error = %e.message(), "request failed with an internal error");
    }
    jsonrpc::encode_error(id, &e.to_wire(surface_internal))
}
