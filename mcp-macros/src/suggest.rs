//! "Did you mean" for unknown attribute keys.

/// The closest known key, if one is close enough to be a typo.
pub(crate) fn closest<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (edit_distance(unknown, k), *k))
        .filter(|(d, k)| *d <= 2 && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `unknown key `x` in #[what]; did you mean `y`?` or the list of valid keys.
pub(crate) fn unknown_key(what: &str, key: &str, known: &[&str]) -> String {
    match closest(key, known) {
        Some(k) => format!("unknown key `{key}` in #[{what}(...)]; did you mean `{k}`?"),
        None => format!(
            "unknown key `{key}` in #[{what}(...)]; expected one of: {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
