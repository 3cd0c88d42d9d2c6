//! The host's own tool names: the one place they are spelled. Protocol (`tools.execute`), the
//! tools crate's dispatch, the service, the policy and the generated TypeScript all take them
//! from [`HostTool`].

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// A tool the host itself knows by its canonical name, whatever agent the session serves:
    /// the six it runs (`tools.execute`), the planning tools of seeds 000 and 003, and seed 000's
    /// host utilities. Every agent's catalog recognises these names.
    HostTool {
        /// Read a file.
        Read = "Read",
        /// List files by glob.
        Glob = "Glob",
        /// Search file contents.
        Grep = "Grep",
        /// Write a file.
        Write = "Write",
        /// Replace text in a file.
        Edit = "Edit",
        /// Run a command in the session's pinned shell.
        Bash = "Bash",
        /// Enter Plan mode (seed 000).
        EnterPlanMode = "EnterPlanMode",
        /// Submit the plan for approval (seed 000): `plans.submit`.
        SubmitPlan = "SubmitPlan",
        /// Record a plan checkpoint (seed 003): `plans.checkpoint`.
        UpdatePlanDraft = "update_plan_draft",
        /// Read the current plan checkpoint back.
        ReadPlan = "read_plan",
        /// Publication as a model tool (seed 003): always refused, `/plan save` publishes.
        CreatePlan = "create_plan",
        /// Compact the context (a seed 000 host utility).
        CompactContext = "CompactContext",
        /// Preview in a browser (a seed 000 host utility).
        BrowserPreview = "BrowserPreview",
    }
}

impl HostTool {
    /// The tools the host runs itself with `tools.execute`, in a fixed order.
    pub const RUN_BY_HOST: [HostTool; 6] = [
        HostTool::Read,
        HostTool::Glob,
        HostTool::Grep,
        HostTool::Write,
        HostTool::Edit,
        HostTool::Bash,
    ];

    /// True for the six tools `tools.execute` runs; the planning tools are host methods
    /// (`plans.*`) and the utilities are the client's.
    pub fn runs_in_host(self) -> bool {
        Self::RUN_BY_HOST.contains(&self)
    }

    /// The planning tools a client offers in Plan mode (seeds 000 and 003), besides the
    /// pre-Plan selection: `SubmitPlan`, `update_plan_draft`, `read_plan`.
    pub const PLANNING: [HostTool; 3] = [
        HostTool::SubmitPlan,
        HostTool::UpdatePlanDraft,
        HostTool::ReadPlan,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn names_round_trip_and_only_six_run_in_the_host() {
        for tool in HostTool::ALL {
            assert_eq!(HostTool::from_str(tool.as_str()).ok(), Some(*tool));
        }
        let run: Vec<_> = HostTool::ALL.iter().filter(|t| t.runs_in_host()).collect();
        assert_eq!(run.len(), 6);
        assert!(HostTool::from_str("read").is_err(), "canonical names only");
    }
}
