//! Finding a member of a small JSON object (or a small list) by name. `serde_json::Map` hashes
//! every name it looks up (SipHash); for the few members a tool's arguments or a schema's
//! `required` list hold, comparing names in order is cheaper. Past [`SCANNED`], a lookup.

use serde_json::{Map, Value};

/// Up to this many entries, a name is found by comparing, not by hashing.
pub(crate) const SCANNED: usize = 8;

/// Whether `map` has member `name`.
#[cfg_attr(not(feature = "validation"), allow(dead_code))] // the schema check's `required`
pub(crate) fn has(map: &Map<String, Value>, name: &str) -> bool {
    if map.len() <= SCANNED {
        map.keys().any(|key| key == name)
    } else {
        map.contains_key(name)
    }
}

/// Member `name` of `map`, taken out: a scanned one is left `null` in its place (for callers
/// that drop the map once every member they want is taken), a looked-up one removed.
pub(crate) fn take(map: &mut Map<String, Value>, name: &str) -> Option<Value> {
    if map.len() <= SCANNED {
        map.iter_mut()
            .find(|(key, _)| key.as_str() == name)
            .map(|(_, value)| value.take())
    } else {
        map.remove(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same answers on both sides of the threshold (scanned and looked up).
    #[test]
    fn few_and_many_members_are_found_alike() {
        for size in [2, SCANNED, SCANNED + 1, 3 * SCANNED] {
            let mut map: Map<String, Value> = (0..size)
                .map(|i| (format!("m{i}"), Value::from(i)))
                .collect();
            let last = format!("m{}", size - 1);
            assert!(has(&map, "m0") && has(&map, &last), "{size}");
            assert!(!has(&map, "absent"), "{size}");
            assert_eq!(take(&mut map, &last), Some(Value::from(size - 1)), "{size}");
            assert_eq!(take(&mut map, "absent"), None, "{size}");
            assert_eq!(take(&mut map, "m0"), Some(Value::from(0)), "{size}");
        }
    }
}
