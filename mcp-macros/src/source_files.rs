//! Files the macros read beside the tokens they are given (the crate's `Cargo.toml`, the
//! source file around a function): read once per compiler thread and kept while their
//! modification time stays the same, so a crate with many attributed functions reads each file
//! once, and a long-lived proc-macro server (rust-analyzer's) sees an edit.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

thread_local! {
    static FILES: RefCell<HashMap<PathBuf, (SystemTime, Rc<str>)>> = RefCell::new(HashMap::new());
}

/// The text of `path`; `None` when it cannot be read as UTF-8.
pub(crate) fn read(path: &Path) -> Option<Rc<str>> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    if let Some(modified) = modified {
        let kept = FILES.with(|files| {
            files
                .borrow()
                .get(path)
                .filter(|(at, _)| *at == modified)
                .map(|(_, text)| text.clone())
        });
        if kept.is_some() {
            return kept;
        }
    }
    let text: Rc<str> = std::fs::read_to_string(path).ok()?.into();
    if let Some(modified) = modified {
        FILES.with(|files| {
            files
                .borrow_mut()
                .insert(path.to_owned(), (modified, text.clone()))
        });
    }
    Some(text)
}
