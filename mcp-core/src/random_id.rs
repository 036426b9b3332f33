//! Unguessable ids (sessions, tasks): 128 bits from the OS CSPRNG.

use crate::error::McpError;

/// 128 bits from the OS CSPRNG as 32 lowercase hex characters (visible ASCII only).
pub(crate) fn random_id() -> Result<String, McpError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| McpError::internal(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
