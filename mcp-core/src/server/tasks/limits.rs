//! How many unfinished tasks this process started, in all and per client: the limits of
//! [`McpServer::max_tasks`](crate::server::McpServer::max_tasks) and
//! [`McpServer::max_tasks_per_client`](crate::server::McpServer::max_tasks_per_client).

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use crate::error::{codes, McpError};

/// Which limit a new task would pass.
#[derive(Debug)]
pub(super) enum Refused {
    /// The server's ([`McpServer::max_tasks`](crate::server::McpServer::max_tasks)).
    Server(usize),
    /// The client's
    /// ([`McpServer::max_tasks_per_client`](crate::server::McpServer::max_tasks_per_client)).
    Client(usize),
}

impl From<Refused> for McpError {
    fn from(refused: Refused) -> Self {
        let message = match refused {
            Refused::Server(max) => format!(
                "Too many unfinished tasks on this server (the limit is {max}); try again later"
            ),
            Refused::Client(max) => format!(
                "Too many unfinished tasks for this client (the limit is {max}); wait for some \
                 to end or cancel them"
            ),
        };
        McpError::new(codes::INTERNAL_ERROR, message)
    }
}

/// The default of [`McpServer::max_tasks`](crate::server::McpServer::max_tasks).
const DEFAULT_MAX_TASKS: usize = 1024;

/// The default of
/// [`McpServer::max_tasks_per_client`](crate::server::McpServer::max_tasks_per_client).
const DEFAULT_MAX_TASKS_PER_CLIENT: usize = 64;

/// The unfinished tasks this process created: each counts from its creation until this
/// process sees it end (its run settles it, or a `tasks/cancel` served here ends it) or until
/// its expiry, whichever comes first.
#[derive(Debug)]
pub(super) struct Live {
    max: usize,
    per_client: usize,
    tasks: HashMap<String, (Option<String>, Instant)>,
    per_owner: HashMap<String, usize>,
    by_expiry: BTreeSet<(Instant, String)>,
}

impl Default for Live {
    fn default() -> Self {
        Self {
            max: DEFAULT_MAX_TASKS,
            per_client: DEFAULT_MAX_TASKS_PER_CLIENT,
            tasks: HashMap::new(),
            per_owner: HashMap::new(),
            by_expiry: BTreeSet::new(),
        }
    }
}

impl Live {
    pub(super) fn set_limits(&mut self, max: Option<usize>, per_client: Option<usize>) {
        if let Some(max) = max {
            self.max = max.max(1);
        }
        if let Some(per_client) = per_client {
            self.per_client = per_client.max(1);
        }
    }

    /// Counts task `id` of `owner` (expiring at `expires`), or says which limit it would
    /// pass. Tasks without an owner (no authenticated principal: clients cannot be told
    /// apart) count only against the overall limit.
    pub(super) fn admit(
        &mut self,
        id: &str,
        owner: Option<&str>,
        expires: Instant,
    ) -> Result<(), Refused> {
        self.purge(Instant::now());
        if self.tasks.len() >= self.max {
            return Err(Refused::Server(self.max));
        }
        if let Some(owner) = owner {
            let held = self.per_owner.get(owner).copied().unwrap_or(0);
            if held >= self.per_client {
                return Err(Refused::Client(self.per_client));
            }
            *self.per_owner.entry(owner.to_owned()).or_insert(0) += 1;
        }
        self.tasks
            .insert(id.to_owned(), (owner.map(str::to_owned), expires));
        self.by_expiry.insert((expires, id.to_owned()));
        Ok(())
    }

    /// The tasks counted against the limit `refused` names (the client's own, or all): the
    /// ones to check again in the store before refusing, since a task that ended on another
    /// replica is still counted here.
    pub(super) fn counted(&self, refused: &Refused, owner: Option<&str>) -> Vec<String> {
        self.tasks
            .iter()
            .filter(|(_, (of, _))| match refused {
                Refused::Client(_) => of.as_deref() == owner,
                Refused::Server(_) => true,
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Stops counting task `id` (ended, or never created).
    pub(super) fn release(&mut self, id: &str) {
        let Some((owner, expires)) = self.tasks.remove(id) else {
            return;
        };
        self.by_expiry.remove(&(expires, id.to_owned()));
        if let Some(owner) = owner {
            if let Some(held) = self.per_owner.get_mut(&owner) {
                *held -= 1;
                if *held == 0 {
                    self.per_owner.remove(&owner);
                }
            }
        }
    }

    fn purge(&mut self, now: Instant) {
        while let Some((expires, id)) = self.by_expiry.first().cloned() {
            if expires > now {
                break;
            }
            self.release(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Live;
    use crate::error::McpError;
    use std::time::{Duration, Instant};

    #[test]
    fn counts_per_owner_and_in_all_and_forgets_ended_and_expired_tasks() {
        let mut live = Live::default();
        live.set_limits(Some(3), Some(2));
        let later = Instant::now() + Duration::from_secs(60);
        live.admit("a1", Some("alice"), later).unwrap();
        live.admit("a2", Some("alice"), later).unwrap();
        let refused = McpError::from(live.admit("a3", Some("alice"), later).unwrap_err());
        assert!(refused.message().contains("for this client"), "{refused}");
        live.admit("n1", None, later).unwrap();
        let full = McpError::from(live.admit("b1", Some("bob"), later).unwrap_err());
        assert!(full.message().contains("on this server"), "{full}");
        live.release("a1");
        live.admit("a3", Some("alice"), later).unwrap();
        live.release("n1");
        live.admit("gone", Some("bob"), Instant::now()).unwrap();
        // Expired: no longer counted.
        live.admit("b2", Some("bob"), later).unwrap();
    }
}
