//! Digests of JSON values that do not depend on key order.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The first 16 bytes of SHA-256 over `value` written canonically (object keys sorted, no
/// whitespace), hex-encoded.
pub(crate) fn digest_json(value: &Value) -> String {
    let mut hasher = Sha256::new();
    write_canonical(value, &mut hasher);
    let hash = hasher.finalize();
    hash[..16].iter().map(|b| format!("{b:02x}")).collect()
}

fn write_canonical(value: &Value, out: &mut Sha256) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.update(b"{");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.update(b",");
                }
                write_canonical(&Value::String(key.clone()), out);
                out.update(b":");
                write_canonical(&map[key], out);
            }
            out.update(b"}");
        }
        Value::Array(items) => {
            out.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.update(b",");
                }
                write_canonical(item, out);
            }
            out.update(b"]");
        }
        scalar => out.update(scalar.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_matter_but_values_do() {
        let a = digest_json(&json!({"a": 1, "b": {"x": [1, 2], "y": "z"}}));
        let b = digest_json(&json!({"b": {"y": "z", "x": [1, 2]}, "a": 1}));
        let c = digest_json(&json!({"b": {"y": "z", "x": [2, 1]}, "a": 1}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 32);
    }
}
