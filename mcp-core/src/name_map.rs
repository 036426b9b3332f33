//! [`NameMap`]: the maps the engine looks a name up in on every request (the handler table by
//! method, the tools by name), hashed with FNV-1a rather than SipHash.
//!
//! The names in these maps are the server's own (methods it handles, tools it registers), so
//! a client cannot fill them with colliding keys: what SipHash defends against cannot happen,
//! and a short name hashes several times faster.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map from a name the server chose to `V`.
pub(crate) type NameMap<V> = HashMap<String, V, BuildHasherDefault<Fnv>>;

/// FNV-1a, 64 bits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_and_distinct_names_kept_apart() {
        let mut map: NameMap<usize> = NameMap::default();
        let names = [
            "tools/call",
            "tools/list",
            "ping",
            "",
            "tools/call2",
            "a",
            "b",
        ];
        for (i, name) in names.iter().enumerate() {
            map.insert((*name).to_owned(), i);
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(map.get(*name), Some(&i), "{name}");
        }
        assert_eq!(map.get("tools/cal"), None);
        // The published FNV-1a test vector.
        let mut h = Fnv::default();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
