//! The shell vocabulary of seed 000 §2 and §8: platform, catalog ids and dialects. What is
//! available on a machine is `planhost-exec`'s to probe; these are only the names.

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The operating-system family whose catalog applies.
    Platform {
        /// Windows: PowerShell, cmd and Git Bash.
        Windows = "windows",
        /// macOS: bash.
        MacOs = "macos",
        /// Linux and other unixes: bash.
        Linux = "linux",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// A stable shell catalog id. The wire strings never change.
    ShellId {
        /// Windows PowerShell (`powershell.exe`).
        WindowsPowershell = "windows-powershell",
        /// The Windows command interpreter (`cmd.exe`).
        Cmd = "cmd",
        /// Git for Windows' bash.
        GitBash = "git-bash",
        /// bash on macOS and Linux.
        Bash = "bash",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// The command language of a shell.
    Dialect {
        /// PowerShell syntax.
        Powershell = "powershell",
        /// cmd.exe syntax.
        Cmd = "cmd",
        /// POSIX sh / bash syntax.
        Posix = "posix",
    }
}

wire_enum! {
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    /// Which pipe a piece of command output came from.
    OutputStream {
        /// Standard output.
        Stdout = "stdout",
        /// Standard error.
        Stderr = "stderr",
    }
}

impl Platform {
    /// The platform this binary was built for (other unixes use the Linux catalog).
    pub fn current() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else if cfg!(target_os = "macos") {
            Self::MacOs
        } else {
            Self::Linux
        }
    }

    /// The shell ids this platform offers, in catalog order (the fallback order).
    pub fn shell_ids(self) -> &'static [ShellId] {
        match self {
            Self::Windows => &[ShellId::WindowsPowershell, ShellId::Cmd, ShellId::GitBash],
            Self::MacOs | Self::Linux => &[ShellId::Bash],
        }
    }
}

impl ShellId {
    /// The label a settings page shows.
    pub fn label(self) -> &'static str {
        match self {
            Self::WindowsPowershell => "Windows PowerShell",
            Self::Cmd => "Command Prompt",
            Self::GitBash => "Git Bash",
            Self::Bash => "Bash",
        }
    }

    /// The command language this shell speaks.
    pub fn dialect(self) -> Dialect {
        match self {
            Self::WindowsPowershell => Dialect::Powershell,
            Self::Cmd => Dialect::Cmd,
            Self::GitBash | Self::Bash => Dialect::Posix,
        }
    }
}
