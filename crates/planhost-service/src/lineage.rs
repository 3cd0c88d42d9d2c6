//! Declared roles against proven lineage: a connection from a process that runs under an agent
//! is refused the `approver` role (DESIGN decisions 9 and 12: no face a model drives is an
//! approver). The procfs reading is `planhost_exec::lineage`; the decision is here, in
//! [`crate::Service::connect`], so every transport shares it.

use std::sync::{Mutex, PoisonError};

/// Who is at the other end of a connection, as its transport knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The app that embeds the service in process, or the one app on `serve --stdio` (it
    /// started the host and owns its pipes): no process lineage applies, as before.
    Embedded,
    /// A process at the other end of a socket, by the pid the kernel names (`SO_PEERCRED`);
    /// `None` when the kernel did not say, which an `approver` is refused for.
    Process(Option<i32>),
    /// The process at the other end of the web page's loopback TCP connection, as
    /// `planhost_exec::lineage::tcp_peers` found it. Its `approver` is refused only when it is
    /// one of this host's runs (its marker, its cgroup, or under the host): agent roots do not
    /// apply, since a browser is never a child of pi in practice, while a person's browser
    /// started by a program that holds an agent connection (the web tests' Chromium) is one.
    /// A page client that could not be found is [`Peer::Embedded`].
    WebClient(i32),
}

impl Peer {
    /// The peer's pid, when there is one.
    pub fn pid(self) -> Option<i32> {
        match self {
            Peer::Embedded | Peer::Process(None) => None,
            Peer::Process(Some(pid)) | Peer::WebClient(pid) => Some(pid),
        }
    }
}

/// Why an approver was refused: the stable name of the reason, the process that gave it away,
/// and the sentence for the refusal.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    pub(crate) why: &'static str,
    pub(crate) by: Option<i32>,
    pub(crate) message: String,
}

/// What the person can do instead, at the end of every refusal.
const INSTEAD: &str = "a model cannot approve its own plan: answer from your own terminal, \
                       the agent's dialog or the web page (reading needs only the observer role)";

/// The processes that hold, or held while they live, an `agent` connection: their strict
/// descendants are no approvers. By pid and start time, never by pid alone.
#[derive(Debug, Default)]
pub(crate) struct AgentRoots {
    #[cfg(target_os = "linux")]
    roots: Mutex<Vec<planhost_exec::lineage::ProcessIdentity>>,
    #[cfg(not(target_os = "linux"))]
    roots: Mutex<Vec<i32>>,
}

impl AgentRoots {
    /// Records the peer of an `agent` connection as an agent root (a process peer only).
    pub(crate) fn add(&self, peer: Peer) {
        #[cfg(target_os = "linux")]
        {
            use planhost_exec::lineage::ProcessIdentity;
            let Some(me) = peer.pid().and_then(ProcessIdentity::of) else {
                return;
            };
            let mut roots = self.roots.lock().unwrap_or_else(PoisonError::into_inner);
            // Forget the ones that are gone, so the list stays as small as the live agents.
            roots.retain(|r| r.alive());
            if !roots.contains(&me) {
                roots.push(me);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (peer, &self.roots);
    }

    /// Records `agent`, which an `agent` connection declared as the agent it acts for
    /// (`initialize`'s `agentProcess`), as an agent root. It must be the peer itself, its parent
    /// or its grandparent (a hook runs as the agent's child, or through its shell): a helper
    /// cannot name a process it does not run under, nor one far above it (init, the person's
    /// login shell), which would take the approver role away from everything below. Elsewhere
    /// than Linux the declaration stands, like the declared roles.
    pub(crate) fn add_declared(&self, peer: Peer, agent: u32) -> Result<(), String> {
        let Ok(agent) = i32::try_from(agent) else {
            return Err(format!("agentProcess {agent} is not a pid"));
        };
        #[cfg(target_os = "linux")]
        {
            use planhost_exec::lineage::{ProcessIdentity, is_ancestor_within};
            let Some(root) = ProcessIdentity::of(agent) else {
                return Err(format!("agentProcess {agent} is not a running process"));
            };
            let under = match peer {
                Peer::Embedded => true,
                Peer::Process(Some(pid)) => agent > 1 && is_ancestor_within(root, pid, 2),
                Peer::Process(None) | Peer::WebClient(_) => false,
            };
            if !under {
                return Err(format!(
                    "agentProcess {agent} is not the connecting process, its parent or its grandparent"
                ));
            }
            let mut roots = self.roots.lock().unwrap_or_else(PoisonError::into_inner);
            roots.retain(|r| r.alive());
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (peer, agent, &self.roots);
        Ok(())
    }

    /// Why `peer` is one of this host's runs (its marker, its cgroup, or under the host), in a
    /// sentence; `None` when it is not, or cannot be told (no procfs).
    pub(crate) fn inside_runs(&self, peer: Peer) -> Option<String> {
        let pid = peer.pid()?;
        #[cfg(target_os = "linux")]
        {
            let why = planhost_exec::lineage::agent_lineage(pid, &[])?;
            Some(why.to_string())
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = pid;
            None
        }
    }

    /// Why `peer` may not be an approver; `None` when it may.
    pub(crate) fn refuses(&self, peer: Peer) -> Option<Refusal> {
        let (pid, runs_only) = match peer {
            Peer::Embedded => return None,
            Peer::Process(Some(pid)) => (pid, false),
            Peer::WebClient(pid) => (pid, true),
            Peer::Process(None) => {
                return Some(Refusal {
                    why: "unknown",
                    by: None,
                    message: format!(
                        "the kernel did not name the process at the other end of this \
                         connection, so planhost cannot tell whether it runs under an agent; {INSTEAD}"
                    ),
                });
            }
        };
        #[cfg(target_os = "linux")]
        {
            use planhost_exec::lineage::{Why, agent_lineage};
            let roots = if runs_only {
                Vec::new()
            } else {
                self.roots
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            };
            let why = agent_lineage(pid, &roots)?;
            let message = match why {
                Why::Unknown { .. } => format!(
                    "planhost cannot tell whether this process (pid {pid}) runs under an agent \
                     ({why}); {INSTEAD}"
                ),
                Why::RunMarker { .. }
                | Why::RunCgroup { .. }
                | Why::UnderHost { .. }
                | Why::AgentRoot { .. } => {
                    format!("this process runs under an agent ({why}); {INSTEAD}")
                }
            };
            Some(Refusal {
                why: why.as_str(),
                by: Some(why.pid()),
                message,
            })
        }
        // Elsewhere there is no procfs to read: the declared roles stand (documented).
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (pid, runs_only, &self.roots);
            None
        }
    }
}

impl Peer {
    /// Who is at the other end of the web page's loopback TCP connection from `client` to
    /// `server`: the holder that runs under an agent when there is one (so it is refused), else
    /// the first holder; [`Peer::Embedded`] when none is found (elsewhere than Linux too). Why
    /// not refuse a page client that cannot be found: the page's own checks (token cookie, CSRF
    /// field, same-origin `Origin`, loopback `Host`) still stand, and a run cannot hide its socket
    /// (it runs as this user, in the host's namespace). Reads `/proc`: call it off the protocol
    /// threads (it blocks).
    pub fn of_web_client(client: std::net::SocketAddr, server: std::net::SocketAddr) -> Self {
        #[cfg(target_os = "linux")]
        {
            use planhost_exec::lineage::{agent_lineage, tcp_peers};
            let holders = tcp_peers(client, server);
            let found = holders
                .iter()
                .copied()
                .find(|&pid| agent_lineage(pid, &[]).is_some())
                .or_else(|| holders.first().copied());
            if let Some(pid) = found {
                return Peer::WebClient(pid);
            }
            tracing::debug!(%client, "no process found for the page's client; answering as before");
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (client, server);
            tracing::debug!("no procfs to find the page's client; answering as before");
        }
        Peer::Embedded
    }
}
