//! Era negotiation on connect: `server/discover` first (2026), `initialize` (2025) for a server
//! that does not answer it, as `basic/versioning` of 2026-07-28 describes.

use std::sync::Arc;

use serde_json::Value;

use super::{Client, EraChoice, RequestOptions};
use crate::era::{Era, LATEST_LEGACY_VERSION, LEGACY_VERSIONS, MODERN_VERSIONS};
use crate::error::{codes, McpError};
use crate::types::{DiscoverResult, InitializeRequestParams, InitializeResult};

pub(crate) async fn negotiate(client: &Client) -> Result<(), McpError> {
    match &client.config.era {
        EraChoice::Pinned(version) if LEGACY_VERSIONS.contains(&version.as_str()) => {
            initialize(client, version).await
        }
        EraChoice::Pinned(_) => Ok(()),
        EraChoice::Auto => probe(client).await,
    }
}

/// `server/discover`: a result means 2026; `-32022` names the versions the server serves
/// (one of ours: stay 2026 with it; only 2025 ones: `initialize`); anything else, a timeout
/// included, means a 2025 server. A connection that is gone is an error, not a fallback.
async fn probe(client: &Client) -> Result<(), McpError> {
    let options = RequestOptions::new().timeout(Some(client.config.probe_timeout));
    let answer = client
        .send(
            "server/discover",
            &Value::Object(Default::default()),
            &options,
        )
        .await;
    let answer = answer.and_then(|raw| Ok(serde_json::from_str::<DiscoverResult>(raw.get())?));
    match answer {
        Ok(discover) => {
            let ours = discover
                .supported_versions
                .iter()
                .find(|v| MODERN_VERSIONS.contains(&v.as_str()))
                .cloned();
            match ours {
                Some(version) => {
                    client.set_negotiated(|n| {
                        n.era = Era::Modern;
                        n.version = Arc::from(version.as_str());
                        n.discover = Some(Arc::new(discover));
                    });
                    Ok(())
                }
                None => initialize(client, LATEST_LEGACY_VERSION).await,
            }
        }
        Err(e) if client.shared.pending.is_closed() => Err(e),
        Err(e) if e.code() == codes::UNSUPPORTED_PROTOCOL_VERSION => {
            let supported: Vec<String> = e
                .data()
                .and_then(|d| d.get("supported"))
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .unwrap_or_default();
            match supported
                .iter()
                .find(|v| MODERN_VERSIONS.contains(&v.as_str()))
            {
                Some(version) => {
                    client.set_negotiated(|n| n.version = Arc::from(version.as_str()));
                    Ok(())
                }
                None if supported
                    .iter()
                    .any(|v| LEGACY_VERSIONS.contains(&v.as_str())) =>
                {
                    initialize(client, LATEST_LEGACY_VERSION).await
                }
                None => Err(McpError::internal(format!(
                    "the server speaks none of this client's protocol versions \
                     (it supports {supported:?})"
                ))),
            }
        }
        Err(e) => {
            tracing::debug!(error = %e, "server/discover failed; trying initialize (2025)");
            initialize(client, LATEST_LEGACY_VERSION).await
        }
    }
}

/// The 2025 handshake: `initialize` with `version`, accept the version the server answers if
/// this client speaks it, then `notifications/initialized`.
async fn initialize(client: &Client, version: &str) -> Result<(), McpError> {
    client.set_negotiated(|n| {
        n.era = Era::Legacy;
        n.version = Arc::from(version);
        n.discover = None;
    });
    let params = InitializeRequestParams {
        protocol_version: version.to_owned(),
        capabilities: client.config.capabilities.clone(),
        client_info: client.config.client_info.clone(),
        meta: None,
    };
    let options = RequestOptions::new();
    let raw = client
        .send("initialize", &serde_json::to_value(params)?, &options)
        .await?;
    let result: InitializeResult = serde_json::from_str(raw.get())?;
    if !LEGACY_VERSIONS.contains(&result.protocol_version.as_str()) {
        return Err(McpError::internal(format!(
            "the server answered initialize with protocol version {}, which this client does \
             not speak",
            result.protocol_version
        )));
    }
    client.set_negotiated(|n| {
        n.version = Arc::from(result.protocol_version.as_str());
        n.initialize = Some(Arc::new(result));
    });
    client
        .notify("notifications/initialized", Value::Null)
        .await
}
