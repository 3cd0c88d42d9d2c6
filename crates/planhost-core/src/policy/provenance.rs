//! Where a tool comes from, and which tools the strict preset trusts: the client's
//! [`ToolProvenance`] claim, the allow-list's [`AllowedTool`] entries with the [`ToolSource`]
//! each must come from, the default allow-list, and [`source_in_package`], the path check that
//! ties an extension tool to its npm package.

use serde::{Deserialize, Serialize};

use crate::{Agent, ToolNature};

/// The package whose `web_search` and `web_fetch` the strict preset admits (seed 003).
pub const WEB_TOOLS_PACKAGE: &str = "@pithos-kit/web";

/// Where a tool comes from, as the client knows it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ToolProvenance {
    /// Built into the client runtime or the host. Only catalog names count as built-ins.
    BuiltIn,
    /// Registered by an extension: a plugin, whatever its name.
    Extension {
        /// The npm package name from the extension's manifest.
        package: String,
        /// The absolute path of the file that registered the tool.
        #[serde(rename = "sourcePath")]
        source_path: String,
    },
}

/// Where an allow-listed tool must come from: what makes a name trustworthy (seed 003's
/// provenance check, extended to the agents' own tools and to MCP servers).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ToolSource {
    /// An extension tool from this exact npm package, its source file inside the package.
    Package {
        /// The package name.
        package: String,
    },
    /// The agent's own built-in of that name, in a session that serves this agent.
    Agent {
        /// The agent.
        agent: Agent,
    },
    /// A tool of this MCP server, named by the session agent's MCP convention.
    McpServer {
        /// The server's name as the agent's naming spells it.
        server: String,
    },
}

/// One tool the strict preset admits in Plan mode, by name and provenance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowedTool {
    /// The exact tool name (for an MCP tool: its name on the server).
    pub tool: String,
    /// Where it must come from.
    pub from: ToolSource,
}

impl AllowedTool {
    /// An extension tool from `package`.
    pub fn package(tool: &str, package: &str) -> Self {
        Self {
            tool: tool.to_owned(),
            from: ToolSource::Package {
                package: package.to_owned(),
            },
        }
    }

    /// The built-in `tool` of `agent`.
    pub fn agent(tool: &str, agent: Agent) -> Self {
        Self {
            tool: tool.to_owned(),
            from: ToolSource::Agent { agent },
        }
    }

    /// The tool `tool` of the MCP server `server`.
    pub fn mcp(tool: &str, server: &str) -> Self {
        Self {
            tool: tool.to_owned(),
            from: ToolSource::McpServer {
                server: server.to_owned(),
            },
        }
    }

    /// True when the call `tool_name` with `provenance`, in a session that serves `agent`, is
    /// this entry: an extension of the same name from the package (its source path inside it,
    /// see [`source_in_package`]); the agent's own built-in of that name; or the MCP tool the
    /// agent's naming gives this server's tool.
    pub fn admits(&self, agent: Agent, tool_name: &str, provenance: &ToolProvenance) -> bool {
        match (&self.from, provenance) {
            (
                ToolSource::Package { package },
                ToolProvenance::Extension {
                    package: claimed,
                    source_path,
                },
            ) => {
                self.tool == tool_name
                    && package == claimed
                    && source_in_package(source_path, package)
            }
            (ToolSource::Agent { agent: wanted }, ToolProvenance::BuiltIn) => {
                *wanted == agent && self.tool == tool_name
            }
            (ToolSource::McpServer { server }, ToolProvenance::BuiltIn) => {
                agent.mcp_name(server, &self.tool).as_deref() == Some(tool_name)
            }
            (ToolSource::Package { .. }, ToolProvenance::BuiltIn)
            | (
                ToolSource::Agent { .. } | ToolSource::McpServer { .. },
                ToolProvenance::Extension { .. },
            ) => false,
        }
    }
}

/// The strict preset's default allow-list: `web_search` and `web_fetch` from
/// [`WEB_TOOLS_PACKAGE`] (seed 003 "Read-only enforcement"), and each agent's own built-in web
/// tools (Claude Code's `WebFetch`/`WebSearch`, Codex's `web_search`, Gemini CLI's
/// `google_web_search`/`web_fetch`): the agent's built-in is the trusted tool of that name.
/// No MCP tool is admitted by default.
pub fn default_strict_allow_list() -> Vec<AllowedTool> {
    let mut list: Vec<AllowedTool> = ["web_search", "web_fetch"]
        .into_iter()
        .map(|tool| AllowedTool::package(tool, WEB_TOOLS_PACKAGE))
        .collect();
    for agent in Agent::ALL {
        for entry in agent.table() {
            if entry.nature == ToolNature::Web {
                list.push(AllowedTool::agent(entry.name, *agent));
            }
        }
    }
    list
}

/// True when `source_path` is a file inside the installed package `package`.
///
/// The rule, so that seed 003's top-level, path-escaping and spoofed-source tools fail:
/// - the path is absolute: POSIX (`/…`, no `\` anywhere, since `\` is a file-name character
///   there) or a Windows drive path (`C:\…` or `C:/…`); relative and UNC paths are refused;
/// - no component is empty, `.` or `..` (nothing to normalise, nothing escapes);
/// - the components after the *last* `node_modules` start with the package name's components
///   (`@pithos-kit`, `web`), compared exactly, and at least one component follows them. The
///   innermost `node_modules` owns a file, as in Node's resolution, so a dependency nested
///   inside the package is not the package.
pub fn source_in_package(source_path: &str, package: &str) -> bool {
    let Some(components) = absolute_components(source_path) else {
        return false;
    };
    if components.iter().any(|c| matches!(*c, "" | "." | "..")) {
        return false;
    }
    let Some(last_modules) = components.iter().rposition(|c| *c == "node_modules") else {
        return false;
    };
    let inside = components.get(last_modules + 1..).unwrap_or_default();
    let wanted: Vec<&str> = package.split('/').collect();
    inside.len() > wanted.len() && inside.starts_with(&wanted)
}

fn absolute_components(path: &str) -> Option<Vec<&str>> {
    if let Some(rest) = path.strip_prefix('/') {
        if path.contains('\\') {
            return None;
        }
        return Some(rest.split('/').collect());
    }
    let bytes = path.as_bytes();
    match bytes {
        [drive, b':', b'/' | b'\\', ..] if drive.is_ascii_alphabetic() => {
            Some(path.get(3..)?.split(['/', '\\']).collect())
        }
        _ => None,
    }
}
