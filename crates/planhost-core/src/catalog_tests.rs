use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::collections::BTreeSet;

#[test]
fn every_table_names_each_tool_once_and_agrees_with_the_host() {
    for agent in Agent::ALL {
        let mut seen = BTreeSet::new();
        for entry in agent.table() {
            assert!(seen.insert(entry.name), "{agent}: {} twice", entry.name);
            assert_ne!(entry.nature, ToolNature::Unknown, "{agent}: {}", entry.name);
            // A canonical name means the same under every agent.
            if let Some(host) = HOST.iter().find(|h| h.name == entry.name) {
                assert_eq!(host.nature, entry.nature, "{agent}: {}", entry.name);
            }
        }
    }
    let host: BTreeSet<_> = HOST.iter().map(|e| e.name).collect();
    let names: BTreeSet<_> = HostTool::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(host, names, "the host table is exactly HostTool's names");
}

#[test]
fn the_fallback_agent_knows_only_the_canonical_names() {
    for tool in HostTool::ALL {
        assert_ne!(
            Agent::Other.classify(tool.as_str()).nature,
            ToolNature::Unknown
        );
    }
    for name in [
        "read",
        "bash",
        "MultiEdit",
        "apply_patch",
        "mcp__github__x",
        "READ",
    ] {
        assert_eq!(
            Agent::Other.classify(name).nature,
            ToolNature::Unknown,
            "{name}"
        );
    }
}

#[test]
fn the_same_name_is_what_its_agent_means() {
    // Gemini's built-in web_fetch; pi's only ever comes from an extension.
    assert_eq!(
        Agent::GeminiCli.classify("web_fetch").nature,
        ToolNature::Web
    );
    assert_eq!(
        Agent::Pi.classify("web_fetch").nature,
        ToolNature::ExtensionWeb
    );
    // Codex's apply_patch writes; pi has none.
    assert_eq!(
        Agent::Codex.classify("apply_patch").nature,
        ToolNature::ChangesFiles
    );
    assert_eq!(
        Agent::Pi.classify("apply_patch").nature,
        ToolNature::Unknown
    );
    // Yet a writer's name is a writer's name to Plan mode, whoever uses it.
    assert!(names_a_file_writer("apply_patch"));
    assert!(names_a_file_writer("replace"));
    assert!(!names_a_file_writer("read_file"));
}

#[test]
fn mcp_names_follow_each_agents_convention() {
    let claude = Agent::ClaudeCode.classify("mcp__github__create_issue");
    assert_eq!(claude.nature, ToolNature::Mcp);
    assert_eq!(
        claude.mcp,
        Some(McpTool {
            server: "github",
            tool: "create_issue"
        })
    );
    assert_eq!(
        Agent::Codex.mcp_tool("mcp__docs__search"),
        Some(McpTool {
            server: "docs",
            tool: "search"
        })
    );
    assert_eq!(
        Agent::GeminiCli.mcp_tool("mcp_github_create_issue"),
        Some(McpTool {
            server: "github",
            tool: "create_issue"
        })
    );
    for (agent, name) in [
        (Agent::ClaudeCode, "mcp____tool"),
        (Agent::ClaudeCode, "mcp__server__"),
        (Agent::ClaudeCode, "mcp_github_x"),
        (Agent::GeminiCli, "mcp__tool"),
        (Agent::Pi, "mcp__github__create_issue"),
        (Agent::Other, "mcp__github__create_issue"),
    ] {
        assert_eq!(agent.mcp_tool(name), None, "{agent} {name}");
    }
    for agent in [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli] {
        let name = agent.mcp_name("github", "create_issue").unwrap();
        assert_eq!(
            agent.mcp_tool(&name),
            Some(McpTool {
                server: "github",
                tool: "create_issue"
            })
        );
    }
    assert_eq!(
        Agent::GeminiCli.classify("discovered_tool_deploy").nature,
        ToolNature::External
    );
}

#[test]
fn the_command_line_is_where_each_agent_puts_it() {
    let line = |agent: Agent, tool: &str, input: serde_json::Value| {
        agent
            .classify(tool)
            .command
            .command_line(&input)
            .map(|c| (c.line.into_owned(), c.dialect))
    };
    let posix = Some(Dialect::Posix);
    assert_eq!(
        line(Agent::ClaudeCode, "Bash", json!({ "command": "ls -la" })),
        Some(("ls -la".into(), None))
    );
    assert_eq!(
        line(
            Agent::ClaudeCode,
            "PowerShell",
            json!({ "command": "Get-ChildItem" })
        ),
        Some(("Get-ChildItem".into(), Some(Dialect::Powershell)))
    );
    assert_eq!(
        line(
            Agent::Codex,
            "shell",
            json!({ "command": ["bash", "-lc", "git status && ls"] })
        ),
        Some(("git status && ls".into(), posix))
    );
    assert_eq!(
        line(
            Agent::Codex,
            "shell",
            json!({ "command": ["/bin/sh", "-c", "cat a"] })
        ),
        Some(("cat a".into(), posix))
    );
    assert_eq!(
        line(
            Agent::Codex,
            "shell",
            json!({ "command": ["rg", "-n", "a b", "it's"] })
        ),
        Some((r"rg -n 'a b' 'it'\''s'".into(), posix))
    );
    assert_eq!(
        line(Agent::Codex, "exec_command", json!({ "cmd": "pwd" })),
        Some(("pwd".into(), None))
    );
    assert_eq!(
        line(
            Agent::GeminiCli,
            "run_shell_command",
            json!({ "command": "ls" })
        ),
        Some(("ls".into(), None))
    );
    assert_eq!(
        line(
            Agent::Pi,
            "bash",
            json!({ "command": "ls", "timeoutMs": 5 })
        ),
        Some(("ls".into(), None))
    );
    // No line, or not where the entry says: never proven read-only.
    assert_eq!(
        line(
            Agent::Codex,
            "write_stdin",
            json!({ "chars": "rm -rf /\n" })
        ),
        None
    );
    assert_eq!(
        line(Agent::Codex, "exec_command", json!({ "command": "ls" })),
        None
    );
    assert_eq!(line(Agent::Codex, "shell", json!({ "command": [] })), None);
    assert_eq!(
        line(Agent::Codex, "shell", json!({ "command": ["ls", 5] })),
        None
    );
    assert_eq!(
        line(Agent::ClaudeCode, "Skill", json!({ "command": "ls" })),
        None
    );
}

#[test]
fn an_argv_keeps_its_meaning_as_one_line() {
    // A word the shell would expand is quoted, so the classifier sees a literal.
    assert_eq!(
        argv_command_line(&["ls", "*", "$HOME", "~", "a=b", ""]).unwrap(),
        r"ls '*' '$HOME' '~' 'a=b' ''"
    );
    // An assignment-looking program name stays a program name.
    assert_eq!(argv_command_line(&["X=1", "ls"]).unwrap(), "'X=1' ls");
    // zsh is not unwrapped: its syntax is not POSIX, so it stays a program the classifier
    // does not prove.
    assert_eq!(
        argv_command_line(&["zsh", "-lc", "ls"]).unwrap(),
        "zsh -lc ls"
    );
    assert!(
        !crate::classify_command(
            &argv_command_line(&["zsh", "-lc", "ls"]).unwrap(),
            Dialect::Posix
        )
        .is_read_only()
    );
    assert_eq!(argv_command_line(&[]), None);
}
