//! Why a command line was not proven read-only: one typed value per finding, whose `Display` is
//! the sentence a person reads in the ask. The classifier decides on the variants alone; no
//! verdict reads a sentence back.

use std::fmt;

/// Why a command line was not proven read-only.
///
/// The `Display` of each variant is the short sentence shown to a person, e.g. "`find -delete`
/// deletes files", "`>` redirects output into `f`", "`rm` is not a known read-only program".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotProven {
    /// A PowerShell line: there is no parser for it yet.
    PowerShell,
    /// A cmd line: there is no parser for it yet.
    Cmd,
    /// The call carries no command line where its catalog entry says it is.
    NoCommandLine,
    /// Substitutions nest deeper than the classifier follows.
    TooDeep,
    /// A number the parser cannot hold (a descriptor, `~N`).
    NumberTooLong,
    /// Parentheses nested too deeply for brush-parser to parse in bounded time.
    TooNested,
    /// Too many complex expansions in one word or here-document for brush-parser's word parser
    /// to read in bounded time.
    TooManyExpansions,
    /// The line does not parse.
    Unparsed,
    /// A word does not parse.
    UnparsedWord {
        /// The word as written.
        word: String,
    },
    /// An unquoted here-document body does not parse.
    UnparsedHereDocument,
    /// A function definition.
    FunctionDefinition {
        /// The function's name.
        name: String,
    },
    /// `coproc`.
    Coproc,
    /// `[[ -v ]]`.
    ExtendedTestVariable,
    /// `[[ a -eq b ]]` with an operand only known at run time.
    ExtendedTestArithmetic {
        /// The operand as written.
        operand: String,
    },
    /// `<>` on a file.
    OpensForWriting {
        /// The file as written.
        target: String,
    },
    /// An output redirection into a file other than `/dev/null`.
    RedirectsIntoFile {
        /// The operator (`>`, `>>`, `>|`, `>&`, `&>`, `&>>`).
        op: &'static str,
        /// The file.
        path: String,
    },
    /// An output redirection into a file named only at run time.
    RedirectsIntoUnknown {
        /// The operator.
        op: &'static str,
        /// The target as written.
        target: String,
    },
    /// `>(...)`.
    WriteProcessSubstitution,
    /// A `<(...)` whose command is not proven.
    ProcessSubstitution {
        /// Why its command is not proven.
        inner: Box<NotProven>,
    },
    /// A script run by a substitution (`$(...)`, backquotes) or by `sh -c` is not proven.
    Runs {
        /// `$(...)`, `` `...` ``, or `bash -c`.
        form: String,
        /// The script, trimmed.
        script: String,
        /// Why it is not proven.
        inner: Box<NotProven>,
    },
    /// Assigning an array element (its index is evaluated).
    ArrayElementAssignment {
        /// The array.
        name: String,
    },
    /// Assigning a name outside the harmless set.
    Assignment {
        /// The variable.
        name: String,
    },
    /// Arithmetic that names variables or runs commands.
    Arithmetic {
        /// The expression, trimmed.
        expr: String,
    },
    /// A parameter expansion that assigns, runs or evaluates something.
    Parameter {
        /// The expansion as written.
        source: String,
        /// What it does.
        does: ParameterUse,
    },
    /// The program name is only known at run time.
    UnknownProgramName {
        /// The name as written.
        source: String,
    },
    /// A program outside the table (or a path to one).
    UnknownProgram {
        /// The name as written.
        name: String,
    },
    /// `eval`.
    Eval,
    /// `source` or `.`.
    SourcesScript {
        /// `source` or `.`.
        program: String,
    },
    /// `nohup`.
    Nohup,
    /// `setsid`.
    Setsid,
    /// `sh`, `bash` or `dash` running a script file or reading commands.
    ShellScript {
        /// The shell.
        program: String,
    },
    /// `[` without its closing `]`.
    UnclosedBracket,
    /// An argument known only at run time, for a program some of whose options write.
    UnknownArgument {
        /// The program.
        program: String,
        /// The argument as written.
        argument: String,
    },
    /// A program (or wrapper) gets an argument known only at run time where it must be fixed.
    ArgumentAtRunTime {
        /// The program.
        program: &'static str,
        /// The argument as written.
        argument: String,
    },
    /// A wrapper runs a command known only at run time.
    RunsUnknown {
        /// The wrapper (`bash -c` for a shell's script).
        program: String,
        /// The argument as written.
        argument: String,
    },
    /// A wrapper's command is not proven.
    Wrapped {
        /// The wrapper.
        wrapper: &'static str,
        /// Why the command is not proven.
        inner: Box<NotProven>,
    },
    /// `xargs`'s command is not proven.
    Xargs {
        /// Why the command is not proven.
        inner: Box<NotProven>,
    },
    /// A `find -exec` (or `-execdir`, `-ok`, `-okdir`) command is not proven.
    FindExec {
        /// The action.
        op: String,
        /// Why its command is not proven.
        inner: Box<NotProven>,
    },
    /// A `find -exec` without its closing `;` or `+`.
    FindExecUnclosed {
        /// The action.
        op: String,
    },
    /// A `find -exec` without a command.
    FindExecEmpty {
        /// The action.
        op: String,
    },
    /// An option (or operand) that writes, runs a program or changes the system.
    WritingOption {
        /// The program, with its subcommand where it has one (`git log`).
        program: String,
        /// The option as shown.
        option: String,
        /// What it does.
        effect: Effect,
    },
    /// `uniq` and `xxd` write to a second operand.
    SecondOperand {
        /// The program.
        program: &'static str,
        /// The operand.
        operand: String,
    },
    /// A form the rule does not know to be read-only.
    UnknownForm {
        /// The program (with a subcommand or option where one applies).
        program: String,
        /// The argument.
        argument: String,
    },
    /// `test -v` or `[ -v`.
    TestVariable {
        /// `test` or `[`.
        program: &'static str,
    },
    /// `test` or `[` with arguments known only at run time in a shape that could become `-v`.
    TestUnknownArguments {
        /// `test` or `[`.
        program: &'static str,
    },
    /// `printf` with an option first.
    PrintfOption {
        /// The option.
        option: String,
    },
    /// `printf` whose first argument is known only at run time.
    PrintfUnknownFirst {
        /// The argument as written.
        argument: String,
    },
    /// `set -o` without its option name.
    SetOptionAlone,
    /// `sed` without a script.
    SedWithoutScript,
    /// A `sed` script this reader does not understand.
    SedUnreadable {
        /// The script, trimmed.
        script: String,
    },
    /// A `sed` command that writes or runs.
    SedCommand {
        /// The command letter.
        command: char,
        /// What it does.
        effect: Effect,
    },
    /// A flag of `sed`'s `s` command that writes or runs.
    SedFlag {
        /// The flag letter.
        flag: char,
        /// What it does.
        effect: Effect,
    },
    /// A git subcommand that is not a known reader.
    GitSubcommand {
        /// The subcommand.
        subcommand: String,
    },
    /// A git subcommand used in a form that changes the repository.
    GitChange {
        /// Which form.
        change: GitChange,
    },
    /// The repository's git configuration names a program that git would run for this
    /// command and that no setting can switch off (an external diff): found by the host, which
    /// reads the configuration before it admits a git command unasked.
    GitConfigNamesProgram {
        /// The key (`diff.external`, `diff.<driver>.command`).
        key: String,
        /// The program it names.
        value: String,
    },
    /// git runs in another directory than the command's (`-C`, `cd`), or in one the line
    /// cannot show, whose configuration the host cannot read before it runs.
    GitElsewhere,
}

/// What a parameter expansion does that is not proven ([`NotProven::Parameter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterUse {
    /// `${x:-$(cmd)}`.
    RunsCommand,
    /// `${!x}`.
    Indirect,
    /// `${x:=v}`.
    MayAssign,
    /// `${x@P}`.
    Prompt,
    /// `${a[expr]}`.
    ArrayIndex,
}

/// What an option does ([`NotProven::WritingOption`], [`NotProven::SedCommand`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// `find -delete`.
    DeletesFiles,
    /// `find -exec`, `fd -x`.
    RunsCommandOnEachFile,
    /// `find -fprint`.
    WritesListIntoFile,
    /// `rg --pre`.
    RunsCommand,
    /// `rg -z`.
    RunsDecompressors,
    /// `sort -o`, `base64 -o`.
    WritesOutputToFile,
    /// `sort --compress-program`.
    RunsProgram,
    /// `tree -o`.
    WritesListingToFile,
    /// `tree -R`.
    WritesTreeHtml,
    /// `date -s`.
    SetsClock,
    /// `file -C`.
    WritesMagicFile,
    /// `hostname NAME`.
    SetsHostName,
    /// `sed -i`.
    EditsInPlace,
    /// `sed -f`.
    ScriptFromFile,
    /// `sed`'s `w`.
    WritesToFile,
    /// `sed`'s `e`.
    RunsShellCommand,
    /// `git -c`.
    SetsConfigurationPager,
    /// `git --config-env`.
    SetsConfiguration,
    /// `git -p`.
    ForcesPager,
    /// `git --exec-path`.
    ChoosesGitPrograms,
    /// `git log --help`.
    RunsHelpViewer,
    /// `git grep -O`.
    RunsPager,
    /// `git log --output`.
    WritesIntoFile,
    /// `git diff --ext-diff`.
    RunsExternalDiff,
    /// `git diff --textconv`.
    RunsTextconv,
    /// `git cat-file --filters`.
    RunsFilters,
    /// `git log --show-signature`, `--format=%G?`.
    RunsGpg,
}

/// A git subcommand's form that changes the repository ([`NotProven::GitChange`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitChange {
    /// `git branch NAME`, `git tag NAME`.
    CreatesName {
        /// `branch` or `tag`.
        subcommand: &'static str,
    },
    /// An option `git branch`/`git tag` does not list with.
    NotListing {
        /// `branch` or `tag`.
        subcommand: &'static str,
        /// The option.
        option: String,
    },
    /// `git remote` with arguments.
    Remotes,
    /// `git config` without a read mode.
    ConfigWithoutRead,
    /// `git config` with options before `get`/`list`.
    ConfigOptionsFirst,
    /// `git config` with another option.
    ConfigOption {
        /// The option.
        option: String,
    },
    /// `git stash` other than `list`, `show`.
    Stash,
    /// `git reflog` with a subcommand.
    Reflog {
        /// The subcommand.
        subcommand: String,
    },
    /// `git worktree` other than `list`.
    Worktree,
}

impl NotProven {
    /// A reason a rule gives when it may only lack the arguments that were held back as
    /// unknown (a `sed` script that is one of them): not a finding on its own.
    pub(super) fn may_be_incomplete(&self) -> bool {
        matches!(
            self,
            NotProven::SedWithoutScript | NotProven::SedUnreadable { .. }
        )
    }
}

impl fmt::Display for NotProven {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotProven::GitConfigNamesProgram { key, value } => write!(
                f,
                "this repository's git configuration names a program git would run (`{key}` = \
                 `{value}`)"
            ),
            NotProven::GitElsewhere => f.write_str(
                "git runs in another directory here, whose configuration (which may name \
                 programs git runs) planhost cannot read first",
            ),
            NotProven::PowerShell => {
                f.write_str("PowerShell commands are never proven read-only yet")
            }
            NotProven::Cmd => f.write_str("cmd commands are never proven read-only yet"),
            NotProven::NoCommandLine => f.write_str("the call has no command line to check"),
            NotProven::TooDeep => {
                f.write_str("the command nests substitutions too deeply to check")
            }
            NotProven::NumberTooLong => {
                f.write_str("a descriptor or `~N` number is too long to check")
            }
            NotProven::TooNested => {
                f.write_str("the command nests parentheses too deeply to check")
            }
            NotProven::TooManyExpansions => {
                f.write_str("a word or here-document has too many expansions to check")
            }
            NotProven::Unparsed => f.write_str("could not parse the command line"),
            NotProven::UnparsedWord { word } => write!(f, "could not parse the word `{word}`"),
            NotProven::UnparsedHereDocument => f.write_str("could not parse a here-document body"),
            NotProven::FunctionDefinition { name } => {
                write!(
                    f,
                    "defining the function `{name}` is never proven read-only"
                )
            }
            NotProven::Coproc => {
                f.write_str("`coproc` runs a command in the background, never proven read-only")
            }
            NotProven::ExtendedTestVariable => {
                f.write_str("`[[ -v ]]` evaluates an array index, which is not checked")
            }
            NotProven::ExtendedTestArithmetic { operand } => write!(
                f,
                "`[[ -eq ]]` evaluates `{operand}` as arithmetic, which is not checked"
            ),
            NotProven::OpensForWriting { target } => {
                write!(f, "`<>` opens `{target}` for writing")
            }
            NotProven::RedirectsIntoFile { op, path } => {
                write!(f, "`{op}` redirects output into `{path}`")
            }
            NotProven::RedirectsIntoUnknown { op, target } => write!(
                f,
                "`{op}` redirects output into `{target}`, known only when the command runs"
            ),
            NotProven::WriteProcessSubstitution => {
                f.write_str("`>(...)` feeds output to a command, never proven read-only")
            }
            NotProven::ProcessSubstitution { inner } => {
                write!(f, "`<(...)` runs a command: {inner}")
            }
            NotProven::Runs {
                form,
                script,
                inner,
            } => write!(f, "`{form}` runs `{script}`: {inner}"),
            NotProven::ArrayElementAssignment { name } => {
                write!(f, "assigning an element of `{name}` evaluates its index")
            }
            NotProven::Assignment { name } => write!(
                f,
                "setting `{name}` can change what a program does, so it is never proven read-only"
            ),
            NotProven::Arithmetic { expr } => write!(
                f,
                "arithmetic `{expr}` names variables or runs commands, which is not checked"
            ),
            NotProven::Parameter { source, does } => match does {
                ParameterUse::RunsCommand => {
                    write!(f, "`{source}` runs a command inside a parameter expansion")
                }
                ParameterUse::Indirect => write!(f, "`{source}` expands a variable indirectly"),
                ParameterUse::MayAssign => write!(f, "`{source}` may assign a variable"),
                ParameterUse::Prompt => write!(
                    f,
                    "`{source}` expands a variable as a prompt, which runs commands"
                ),
                ParameterUse::ArrayIndex => write!(
                    f,
                    "`{source}` evaluates an array index, which is not checked"
                ),
            },
            NotProven::UnknownProgramName { source } => write!(
                f,
                "the program name `{source}` is only known when the command runs"
            ),
            NotProven::UnknownProgram { name } => {
                write!(f, "`{name}` is not a known read-only program")
            }
            NotProven::Eval => f.write_str("`eval` runs a string as a command"),
            NotProven::SourcesScript { program } => write!(f, "`{program}` runs a script file"),
            NotProven::Nohup => {
                f.write_str("`nohup` writes `nohup.out` when its output is a terminal")
            }
            NotProven::Setsid => f.write_str(
                "`setsid` runs its command in a session of its own, which may outlive the command",
            ),
            NotProven::ShellScript { program } => write!(
                f,
                "`{program}` runs a script, never proven read-only except `{program} -c 'script'`"
            ),
            NotProven::UnclosedBracket => f.write_str("`[` without a closing `]`"),
            NotProven::UnknownArgument { program, argument } => write!(
                f,
                "`{program}` gets the argument `{argument}`, known only when the command runs, \
                 and some `{program}` options write"
            ),
            NotProven::ArgumentAtRunTime { program, argument } => write!(
                f,
                "`{program}` gets `{argument}`, known only when the command runs"
            ),
            NotProven::RunsUnknown { program, argument } => write!(
                f,
                "`{program}` runs `{argument}`, known only when the command runs"
            ),
            NotProven::Wrapped { wrapper, inner } => {
                write!(f, "`{wrapper}` runs a command: {inner}")
            }
            NotProven::Xargs { inner } => {
                write!(f, "`xargs` runs a command on its input: {inner}")
            }
            NotProven::FindExec { op, inner } => {
                write!(f, "`find {op}` runs a command on each file: {inner}")
            }
            NotProven::FindExecUnclosed { op } => {
                write!(f, "`find {op}` without its closing `;` or `+`")
            }
            NotProven::FindExecEmpty { op } => write!(f, "`find {op}` without a command"),
            NotProven::WritingOption {
                program,
                option,
                effect,
            } => write!(f, "`{program} {option}` {effect}"),
            NotProven::SecondOperand { program, operand } => {
                write!(f, "`{program}` writes to its second operand `{operand}`")
            }
            NotProven::UnknownForm { program, argument } => {
                write!(f, "`{program} {argument}` is not a known read-only form")
            }
            NotProven::TestVariable { program } => write!(
                f,
                "`{program} -v` evaluates an array index, which is not checked"
            ),
            NotProven::TestUnknownArguments { program } => write!(
                f,
                "`{program}` gets arguments known only when the command runs, which could become \
                 `-v`"
            ),
            NotProven::PrintfOption { option } => write!(
                f,
                "`printf {option}` assigns a variable or is not a known form"
            ),
            NotProven::PrintfUnknownFirst { argument } => write!(
                f,
                "`printf` gets `{argument}` first, known only when the command runs, which \
                 could be `-v`"
            ),
            NotProven::SetOptionAlone => {
                f.write_str("`set -o` alone is not a known read-only form")
            }
            NotProven::SedWithoutScript => f.write_str("`sed` without a script"),
            NotProven::SedUnreadable { script } => {
                write!(f, "could not check the `sed` script `{script}`")
            }
            NotProven::SedCommand { command, effect } => {
                write!(f, "the `sed` command `{command}` {effect}")
            }
            NotProven::SedFlag { flag, effect } => {
                write!(f, "the `sed` flag `s///{flag}` {effect}")
            }
            NotProven::GitSubcommand { subcommand } => write!(
                f,
                "`git {subcommand}` is not a known read-only git subcommand"
            ),
            NotProven::GitChange { change } => fmt::Display::fmt(change, f),
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Effect::DeletesFiles => "deletes files",
            Effect::RunsCommandOnEachFile => "runs a command on each file",
            Effect::WritesListIntoFile => "writes its list into a file",
            Effect::RunsCommand => "runs a command",
            Effect::RunsDecompressors => "runs decompression programs",
            Effect::WritesOutputToFile => "writes its output to a file",
            Effect::RunsProgram => "runs a program",
            Effect::WritesListingToFile => "writes its listing to a file",
            Effect::WritesTreeHtml => "writes `00Tree.html` into each directory",
            Effect::SetsClock => "sets the system clock",
            Effect::WritesMagicFile => "writes a compiled magic file",
            Effect::SetsHostName => "sets the host name",
            Effect::EditsInPlace => "edits files in place",
            Effect::ScriptFromFile => "reads its script from a file, which is not checked",
            Effect::WritesToFile => "writes to a file",
            Effect::RunsShellCommand => "runs a shell command",
            Effect::SetsConfigurationPager => {
                "sets configuration, which can run programs (`core.pager`)"
            }
            Effect::SetsConfiguration => "sets configuration, which can run programs",
            Effect::ForcesPager => "forces a pager program",
            Effect::ChoosesGitPrograms => "chooses the programs git runs",
            Effect::RunsHelpViewer => "runs the configured help viewer (`man`, a browser)",
            Effect::RunsPager => "runs a pager program",
            Effect::WritesIntoFile => "writes into a file",
            Effect::RunsExternalDiff => "runs an external diff program",
            Effect::RunsTextconv => "runs the textconv programs configuration names",
            Effect::RunsFilters => "runs the filter programs configuration names",
            Effect::RunsGpg => "runs gpg to check signatures",
        })
    }
}

impl fmt::Display for GitChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitChange::CreatesName { subcommand } => {
                let what = if *subcommand == "tag" {
                    "a tag"
                } else {
                    "a branch"
                };
                write!(f, "`git {subcommand}` with a name creates {what}")
            }
            GitChange::NotListing { subcommand, option } => {
                write!(f, "`git {subcommand} {option}` is not a known listing form")
            }
            GitChange::Remotes => f.write_str(
                "`git remote` with arguments other than `-v` or `get-url` changes remotes",
            ),
            GitChange::ConfigWithoutRead => {
                f.write_str("`git config` without `--get` or `--list` may change configuration")
            }
            GitChange::ConfigOptionsFirst => f.write_str(
                "`git config` with options before `get`/`list` is not a known read form",
            ),
            GitChange::ConfigOption { option } => {
                write!(f, "`git config {option}` may change configuration")
            }
            GitChange::Stash => f.write_str(
                "`git stash` other than `list` or `show` changes the stash and the files",
            ),
            GitChange::Reflog { subcommand } => {
                write!(f, "`git reflog {subcommand}` may change the reflog")
            }
            GitChange::Worktree => {
                f.write_str("`git worktree` other than `list` changes worktrees")
            }
        }
    }
}
