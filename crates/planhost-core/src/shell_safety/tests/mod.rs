mod facts;
mod fast;
mod git;

use proptest::prelude::*;

use super::{CommandSafety, classify_command};
use crate::Dialect;

/// Lines that must be proven read-only.
pub(super) const READ_ONLY: &[&str] = &[
    "",
    "   ",
    "# just a comment",
    "ls",
    "ls -la",
    "ls | head",
    "ls -la src | head -n 20",
    "cat README.md",
    "cat a 2>/dev/null || echo none",
    "cd src && ls",
    "cd src; ls -1; cd ..",
    "pwd",
    "git status",
    "git status --porcelain",
    "git log -p",
    "git log --oneline -n 20",
    "git log -p -1 -- src/lib.rs",
    "git show HEAD~1:src/main.rs",
    "git diff",
    "git diff --stat HEAD~3",
    "git diff --no-index a b",
    "git blame -L 10,20 src/lib.rs",
    "git grep -n foo",
    "git ls-files",
    "git ls-tree -r HEAD",
    "git rev-parse --show-toplevel",
    "git describe --tags",
    "git shortlog -sn",
    "git cat-file -p HEAD",
    "git merge-base main HEAD",
    "git name-rev HEAD",
    "git branch",
    "git branch -a",
    "git branch -vv",
    "git branch --show-current",
    "git branch --list 'feat*'",
    "git tag",
    "git tag -l 'v1.*'",
    "git remote -v",
    "git config --get user.name",
    "git config --list",
    "git config -l --show-origin",
    "git stash list",
    "git stash show -p",
    "git reflog",
    "git reflog show -n 5",
    "git -C sub status",
    "git --no-pager log -3",
    "git status 2>&1 | head",
    "rg foo src",
    "rg -n 'fn main' --type rust",
    "find . -name '*.rs'",
    "find . -type f -name Cargo.toml -maxdepth 2",
    "find . -name '*.rs' -exec grep -l foo {} +",
    "find . -type f -exec wc -l {} \\;",
    "fd -e rs",
    "grep -rn x .",
    "grep -rn \"TODO\" src | wc -l",
    "egrep 'a|b' f",
    "head -n 20 f",
    "tail -f log.txt",
    "wc -l",
    "wc -l src/*.rs",
    "sed -n '1,50p' f",
    "sed -n 10p f",
    "sed 's/a/b/g' f",
    "sed -n '/start/,/end/p' f",
    "sed -e 's/x/y/' -e '2d' f",
    "sed -E 's/(a+)/[\\1]/g' f",
    "sed 's|/usr|/opt|; 3q' f",
    "sed '1i header' f",
    "sed -n '/fn /{p;=}' f",
    "sed '/^$/d;s/ *$//' f",
    "sort f | uniq -c | sort -rn",
    "sort -k2 -t, f",
    "uniq f",
    "uniq -c f",
    "cut -d: -f1 /etc/passwd",
    "tr a-z A-Z < f",
    "echo hi",
    "echo hi >/dev/null",
    "echo hi 2>/dev/null >&2",
    "ls &>/dev/null",
    "ls >>/dev/null",
    "printf '%s\\n' a b",
    "test -f Cargo.toml && echo yes",
    "[ -d src ] || echo missing",
    "[ -n \"$HOME\" ]",
    "[[ -f x && $y == z* ]]",
    "which cargo",
    "type ls",
    "command -v rg",
    "whoami; id; uname -a",
    "date",
    "date +%s",
    "stat -c %s f",
    "file src/main.rs",
    "du -sh .",
    "df -h",
    "basename /a/b; dirname /a/b",
    "realpath .; readlink -f x",
    "nl f; tac f; rev f",
    "diff a b",
    "cmp a b; comm a b",
    "sha256sum f; md5sum f",
    "jq '.name' package.json",
    "tree -L 2",
    "xxd f | head",
    "od -c f; hexdump -C f; strings bin",
    "column -t f; fold -w 80 f",
    "seq 1 10",
    "sleep 1",
    "expr 1 + 2",
    "ps aux",
    "env",
    "printenv PATH",
    "hostname",
    "cat <<'EOF'\nhello $(rm x)\nEOF",
    "cat <<EOF\nhello $HOME\nEOF",
    "grep foo <<< \"$x\"",
    "cat $(git ls-files | head -1)",
    "ls `pwd`",
    "diff <(sort a) <(sort b)",
    "(cd src && ls)",
    "{ ls; pwd; }",
    "if [ -f x ]; then cat x; else echo no; fi",
    "for f in *.rs; do wc -l \"$f\"; done",
    "while read -r line; do echo \"$line\"; done < f",
    "case $x in a) ls;; *) pwd;; esac",
    "LC_ALL=C sort f",
    "LANG=C TZ=UTC date",
    "NO_COLOR=1 ls",
    "GIT_PAGER=cat git log",
    "x=1; echo $x",
    "export LC_ALL=C",
    "env LC_ALL=C ls",
    "timeout 5 cat f",
    "nice -n 5 grep -r foo .",
    "stdbuf -oL grep foo f",
    "command ls",
    "time ls",
    "find . -name '*.rs' | xargs grep foo",
    "xargs -0 cat",
    "bash -c 'ls | head'",
    "sh -c \"git status\"",
    "echo $((1 + 2))",
    "! grep -q foo f",
    "ls & pwd",
    "set -euo pipefail; ls",
    "echo ${HOME:-/tmp}",
    "echo \"${#x}\"",
    "pushd src >/dev/null && ls && popd",
    "date -d @1700000000",
    "rg foo src/*.rs",
    "find src/* -name '*.rs'",
    "git diff -- src/*.rs",
    "sort data/{a,b}.txt",
    "rg foo \"src/$dir\"",
    "ls ~ ~+ ~-",
];

/// Lines that must not be proven read-only, with a part of the expected reason.
pub(super) const MAY_CHANGE: &[(&str, &str)] = &[
    (
        "find . -name victim.txt -delete",
        "`find -delete` deletes files",
    ),
    ("find . -name x -delete", "-delete"),
    (
        "find . -exec rm {} +",
        "`find -exec` runs a command on each file: `rm`",
    ),
    ("find . -exec sed -i s/a/b/ {} +", "`sed -i`"),
    ("find . -exec sort -o x {} \\;", "`sort -o`"),
    ("find . -exec grep x {} \\; -delete", "`find -delete`"),
    ("find . -exec grep x {}", "without its closing"),
    ("find . -exec {} \\;", "program name"),
    (
        "find . -exec sed -n 1p {} +",
        "known only when the command runs",
    ),
    ("find . -execdir touch x \\;", "`touch`"),
    ("find . -ok rm {} \\;", "`find -ok`"),
    ("find . -fprint out", "writes its list"),
    ("find . -fls out", "-fls"),
    ("find *", "known only when the command runs"),
    ("find . $opt", "known only when the command runs"),
    ("git -c core.pager=sh log -p", "`git -c`"),
    ("git --config-env=core.pager=X log", "--config-env"),
    ("git --exec-path=/tmp log", "--exec-path"),
    ("git -p log", "pager"),
    ("git log --output=x", "--output"),
    ("git log --out=x", "--output"),
    ("git diff --ext-diff", "--ext-diff"),
    ("git grep -O foo", "pager"),
    ("git commit -m x", "not a known read-only git subcommand"),
    ("git log --help", "help viewer"),
    ("git push", "not a known read-only git subcommand"),
    ("git checkout .", "not a known read-only git subcommand"),
    ("git branch newbranch", "creates a branch"),
    ("git branch -D old", "not a known listing form"),
    ("git tag v1", "creates a tag"),
    ("git remote add o url", "changes remotes"),
    ("git config user.name x", "may change configuration"),
    ("git config --unset --get x", "may change configuration"),
    ("git stash", "changes the stash"),
    ("git stash pop", "changes the stash"),
    ("git reflog expire --all", "reflog"),
    (
        "git log $(echo --output=x)",
        "known only when the command runs",
    ),
    ("sed -i s/a/b/ f", "`sed -i` edits files in place"),
    ("sed -ni 's/a/b/' f", "`sed -i`"),
    ("sed --in-place=.bak 's/a/b/' f", "`sed -i`"),
    ("sed --in 's/a/b/' f", "`sed -i`"),
    ("sed 's/a/b/w out' f", "writes to a file"),
    ("sed '1e rm x' f", "runs a shell command"),
    ("sed 's/a/b/e' f", "runs a shell command"),
    ("sed -n '/x/w out' f", "writes to a file"),
    ("sed -f script.sed f", "`sed -f`"),
    ("sed -e 'p' -e 'w out' f", "writes to a file"),
    ("sed '1!G;h;$!d;W out' f", "writes to a file"),
    ("sed \"$script\" f", "known only when the command runs"),
    ("sort -o f f", "`sort -o` writes its output to a file"),
    ("sort --output=f f", "`sort -o`"),
    ("sort -ro f f", "`sort -o`"),
    ("sort --compress-program=sh f", "runs a program"),
    ("uniq a b", "second operand"),
    ("uniq -f 1 a b", "second operand"),
    ("xxd a b", "second operand"),
    ("xxd -r dump bin", "second operand"),
    ("tree -o out", "`tree -o`"),
    ("tree -R -H . ", "`tree -R`"),
    ("sed '/x/{s/a/b/w out\n}' f", "writes to a file"),
    ("sed '1a text\\\nw out' -e 'w out2' f", "writes to a file"),
    ("sed 's/a/b/ ; 2 !  W out' f", "writes to a file"),
    ("date -s now", "`date -s`"),
    ("date 0101000000", "sets the system clock"),
    ("rg foo *", "known only when the command runs"),
    ("rg foo src/$dir", "known only when the command runs"),
    ("uniq src/*.txt", "known only when the command runs"),
    ("git branch feat/*", "creates a branch"),
    ("find -* -name x", "known only when the command runs"),
    ("date --set=now", "`date -s`"),
    ("file -C -m magic", "`file -C`"),
    ("hostname foo", "sets the host name"),
    ("rg --pre sh foo", "runs a command"),
    ("rg --pre=sh foo", "runs a command"),
    ("rg -z foo", "decompression"),
    ("fd -x rm", "runs a command"),
    ("fd --exec-batch rm", "runs a command"),
    ("echo x > f", "`>` redirects output into `f`"),
    ("echo x >> f", "`>>` redirects output into `f`"),
    ("ls >| f", "`>|` redirects output into `f`"),
    ("ls &> out.txt", "`&>` redirects output into `out.txt`"),
    ("ls >&out.txt", "redirects output into `out.txt`"),
    ("cat <> f", "`<>` opens"),
    ("ls > \"$out\"", "known only when the command runs"),
    ("cat <<EOF > f\nhi\nEOF", "redirects output into `f`"),
    ("cat > f <<'EOF'\nhi\nEOF", "redirects output into `f`"),
    (
        "cat <<EOF\n$(rm -rf x)\nEOF",
        "`rm` is not a known read-only program",
    ),
    ("cat <<EOF\n`touch y`\nEOF", "`touch`"),
    ("exec 3>out", "redirects output into `out`"),
    (
        "ls $(rm -rf x)",
        "`$(...)` runs `rm -rf x`: `rm` is not a known read-only program",
    ),
    ("ls `touch y`", "`touch` is not a known read-only program"),
    ("echo \"$(rm x)\"", "`rm`"),
    ("echo `echo \\`rm x\\``", "`rm`"),
    ("echo `echo \\$(rm x)`", "`rm`"),
    (
        "echo ${x:-$(rm y)}",
        "runs a command inside a parameter expansion",
    ),
    ("echo ${x:=y}", "may assign"),
    ("echo ${!x}", "indirectly"),
    ("echo ${x@P}", "prompt"),
    ("echo ${a[$i]}", "array index"),
    ("echo $((x))", "arithmetic"),
    ("echo $((a[$(rm x)]))", "arithmetic"),
    ("(( i++ ))", "arithmetic"),
    ("[[ $x -eq 1 ]]", "arithmetic"),
    ("[[ -v 'a[$(rm x)]' ]]", "array index"),
    ("test -v 'a[$(rm x)]'", "`test -v`"),
    ("[ \"$x\" \"$y\" \"$z\" \"$w\" ]", "could become `-v`"),
    ("printf -v x '%s' y", "assigns a variable"),
    ("printf $fmt x", "could be `-v`"),
    ("tee out", "`tee` is not a known read-only program"),
    ("rm x", "`rm` is not a known read-only program"),
    ("mv a b", "`mv` is not a known read-only program"),
    ("cp a b", "`cp`"),
    ("touch x", "`touch`"),
    ("mkdir d", "`mkdir`"),
    ("dd if=a of=b", "`dd`"),
    ("awk '{print > \"out\"}' f", "`awk`"),
    ("perl -e 'unlink q(x)'", "`perl`"),
    ("python3 -c 'open(\"x\",\"w\")'", "`python3`"),
    ("cargo build", "`cargo`"),
    ("npm install", "`npm`"),
    ("make", "`make`"),
    ("curl -o x http://e", "`curl`"),
    ("chmod +x f", "`chmod`"),
    ("sudo ls", "`sudo`"),
    ("./script.sh", "`./script.sh`"),
    ("$cmd x", "program name"),
    ("$(echo rm) x", "program name"),
    ("FOO=1 rm x", "setting `FOO`"),
    ("foo=1 rm x", "`rm` is not a known read-only program"),
    ("LD_PRELOAD=x ls", "`LD_PRELOAD`"),
    ("PATH=/tmp ls", "`PATH`"),
    ("PAGER=sh git log", "`PAGER`"),
    ("GIT_EXTERNAL_DIFF=x git diff", "`GIT_EXTERNAL_DIFF`"),
    ("BASH_ENV=x bash -c ls", "`BASH_ENV`"),
    ("IFS=/ ; ls", "`IFS`"),
    ("export PATH=/tmp", "`PATH`"),
    (
        "declare -x GIT_CONFIG_COUNT=1",
        "not a known read-only form",
    ),
    ("local GIT_DIR=x", "`GIT_DIR`"),
    ("env rm x", "`rm`"),
    ("env LD_PRELOAD=x ls", "`LD_PRELOAD`"),
    ("env -S 'rm x'", "`env -S`"),
    ("timeout 5 rm x", "`rm`"),
    ("xargs rm", "`rm`"),
    (
        "xargs -I{} sed -n 1p {}",
        "known only when the command runs",
    ),
    ("find . | xargs sed -i s/a/b/", "`sed -i`"),
    ("nohup rm x", "nohup"),
    ("nohup ls", "nohup"),
    ("command rm x", "`rm`"),
    ("exec rm x", "`rm`"),
    ("nice rm x", "`rm`"),
    ("time rm x", "`rm`"),
    ("stdbuf -oL rm x", "`rm`"),
    ("ls; rm x", "`rm`"),
    ("ls && (cd / && rm -rf x)", "`rm`"),
    ("ls || rm x", "`rm`"),
    ("ls | tee out", "`tee`"),
    ("{ ls; rm x; }", "`rm`"),
    ("f(){ ls; }; f", "function"),
    ("function f { ls; }", "function"),
    ("if true; then rm x; fi", "`rm`"),
    ("while true; do rm x; done", "`rm`"),
    ("for f in *; do rm \"$f\"; done", "`rm`"),
    ("for PATH in /tmp; do ls; done", "`PATH`"),
    ("case x in x) rm y;; esac", "`rm`"),
    ("eval ls", "`eval` runs a string as a command"),
    ("source ./x.sh", "`source` runs a script file"),
    (". ./x.sh", "`.` runs a script file"),
    ("bash -c 'rm x'", "`rm`"),
    ("sh -c \"$x\"", "known only when the command runs"),
    ("bash script.sh", "never proven"),
    ("cat <(rm x)", "`rm`"),
    ("ls > >(cat)", "`>(...)`"),
    ("tee >(cat) < f", "`>(...)`"),
    ("coproc ls", "coproc"),
    ("trap 'rm x' EXIT", "`trap`"),
    ("alias ls=rm", "`alias`"),
    ("set -k; ls", "`set -k`"),
    ("ls 'unterminated", "could not parse"),
    ("ls ((", "could not parse"),
    ("/tmp/ls", "not a known read-only program"),
    ("ls ~99999999999999999999999", "too long"),
    ("ls ~+99999999999999999999999", "too long"),
    ("ls 99999999999999999999>/dev/null", "too long"),
];

fn posix(line: &str) -> CommandSafety {
    classify_command(line, Dialect::Posix)
}

#[test]
fn read_only_table() {
    let failures: Vec<String> = READ_ONLY
        .iter()
        .filter_map(|line| match posix(line) {
            CommandSafety::ReadOnly => None,
            CommandSafety::MayChangeFiles { reason } => Some(format!("{line:?}: {reason}")),
        })
        .collect();
    assert!(
        failures.is_empty(),
        "expected read-only:\n{}",
        failures.join("\n")
    );
}

#[test]
fn may_change_table() {
    let failures: Vec<String> = MAY_CHANGE
        .iter()
        .filter_map(|(line, expected)| match posix(line) {
            CommandSafety::ReadOnly => Some(format!("{line:?}: proven read-only")),
            CommandSafety::MayChangeFiles { reason } if !reason.to_string().contains(expected) => {
                Some(format!("{line:?}: reason {reason:?} lacks {expected:?}"))
            }
            CommandSafety::MayChangeFiles { .. } => None,
        })
        .collect();
    assert!(
        failures.is_empty(),
        "expected may-change:\n{}",
        failures.join("\n")
    );
}

#[test]
fn table_is_large_and_balanced() {
    assert!(READ_ONLY.len() + MAY_CHANGE.len() >= 150);
    assert!(READ_ONLY.len() >= 75 && MAY_CHANGE.len() >= 75);
}

#[test]
fn other_dialects_are_never_proven() {
    for dialect in [Dialect::Powershell, Dialect::Cmd] {
        let verdict = classify_command("ls", dialect);
        assert!(!verdict.is_read_only());
        assert!(
            verdict
                .reason()
                .is_some_and(|r| r.to_string().contains("never proven read-only yet"))
        );
    }
    assert_eq!(
        classify_command("Get-ChildItem", Dialect::Powershell)
            .reason()
            .map(ToString::to_string)
            .as_deref(),
        Some("PowerShell commands are never proven read-only yet")
    );
}

#[test]
fn accessors() {
    assert!(CommandSafety::ReadOnly.is_read_only());
    assert_eq!(CommandSafety::ReadOnly.reason(), None);
    let may = posix("rm x");
    assert_eq!(
        may.reason().map(ToString::to_string).as_deref(),
        Some("`rm` is not a known read-only program")
    );
}

#[test]
fn deep_nesting_is_bounded() {
    let mut line = "ls".to_owned();
    for _ in 0..40 {
        line = format!("echo \"$({line})\"");
    }
    assert!(!posix(&line).is_read_only());
}

// --- properties -------------------------------------------------------------------------------

/// Read-only simple commands to compose.
const PIECES: &[&str] = &[
    "ls",
    "ls -la src",
    "cat f",
    "git status",
    "git log -p -3",
    "rg foo src",
    "grep -rn x .",
    "find . -name '*.rs'",
    "head -n 20 f",
    "wc -l",
    "sed -n '1,50p' f",
    "echo hi",
    "pwd",
    "sort f",
    "uniq -c",
    "cut -d: -f1",
    "jq .a f",
    "tree -L 2",
    "date",
    "true",
];

/// Write-capable constructs; `{}` marks where a read-only piece goes, when there is one.
const UNSAFE: &[&str] = &[
    "{} > out.txt",
    "{} >> log",
    "{} &> all.txt",
    "find . -name x -delete",
    "find . -exec rm {} +",
    "sed -i s/a/b/ f",
    "sed 's/a/b/w out' f",
    "rm -rf x",
    "touch y",
    "tee out",
    "{} | tee out",
    "ls > >(cat)",
    "f(){ ls; }",
    "LD_PRELOAD=x {}",
    "PATH=/tmp {}",
    "eval {}",
    "sort -o f f",
    "git -c core.pager=sh log -p",
    "git log --output=x",
    "echo $(rm x)",
    "echo `touch y`",
    "xargs rm",
    "bash -c 'rm x'",
    "cat <(rm x)",
    "exec 3>out",
    "uniq a b",
    "python3 x.py",
];

#[derive(Debug, Clone)]
enum Shape {
    Piece(usize),
    Seq(Box<Shape>, &'static str, Box<Shape>),
    Subshell(Box<Shape>),
    Group(Box<Shape>),
    Substitution(Box<Shape>),
    IfThen(Box<Shape>, Box<Shape>),
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = (0..PIECES.len()).prop_map(Shape::Piece);
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec![";", "&&", "||", "|"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| Shape::Seq(Box::new(a), op, Box::new(b))),
            inner.clone().prop_map(|a| Shape::Subshell(Box::new(a))),
            inner.clone().prop_map(|a| Shape::Group(Box::new(a))),
            inner.clone().prop_map(|a| Shape::Substitution(Box::new(a))),
            (inner.clone(), inner).prop_map(|(a, b)| Shape::IfThen(Box::new(a), Box::new(b))),
        ]
    })
}

/// Renders the shape; the `n`-th leaf (counting from 0, when `poison` is set) becomes `poison`.
fn render(shape: &Shape, poison: Option<(&str, usize)>, counter: &mut usize) -> String {
    match shape {
        Shape::Piece(i) => {
            let piece = PIECES.get(*i).copied().unwrap_or("ls");
            let here = *counter;
            *counter += 1;
            match poison {
                Some((bad, at)) if at == here => bad.replace("{}", piece),
                _ => piece.to_owned(),
            }
        }
        Shape::Seq(a, op, b) => format!(
            "{} {op} {}",
            render(a, poison, counter),
            render(b, poison, counter)
        ),
        Shape::Subshell(a) => format!("(true; {})", render(a, poison, counter)),
        Shape::Group(a) => format!("{{ {}; }}", render(a, poison, counter)),
        Shape::Substitution(a) => format!("echo \"$( {})\"", render(a, poison, counter)),
        Shape::IfThen(a, b) => format!(
            "if {}; then {}; fi",
            render(a, poison, counter),
            render(b, poison, counter)
        ),
    }
}

fn leaves(shape: &Shape) -> usize {
    match shape {
        Shape::Piece(_) => 1,
        Shape::Seq(a, _, b) | Shape::IfThen(a, b) => leaves(a) + leaves(b),
        Shape::Subshell(a) | Shape::Group(a) | Shape::Substitution(a) => leaves(a),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn read_only_compositions_stay_read_only(shape in shape()) {
        let line = render(&shape, None, &mut 0);
        prop_assert_eq!(posix(&line), CommandSafety::ReadOnly, "{}", line);
    }

    #[test]
    fn a_write_anywhere_is_never_read_only(
        shape in shape(),
        bad in prop::sample::select(UNSAFE.to_vec()),
        at in any::<prop::sample::Index>(),
    ) {
        let at = at.index(leaves(&shape));
        let line = render(&shape, Some((bad, at)), &mut 0);
        let verdict = posix(&line);
        prop_assert!(!verdict.is_read_only(), "{}", line);
    }

    #[test]
    fn arbitrary_strings_never_panic(line in any::<String>()) {
        let _ = posix(&line);
    }

    #[test]
    fn numbers_in_any_place_never_panic(line in "[~+<>{}.,0-9 $a-]{0,40}") {
        let _ = posix(&line);
    }

    #[test]
    fn shell_like_strings_never_panic(line in "[a-z $`'\"(){};|&<>=*\\\\\\n-]{0,60}") {
        let _ = posix(&line);
    }
}

#[test]
fn every_one_of_many_arguments_is_checked() {
    let files: Vec<String> = (0..40).map(|i| format!("f{i}")).collect();
    let files = files.join(" ");
    assert!(posix(&format!("sort {files}")).is_read_only());
    assert!(posix(&format!("sort {files} src/*.txt")).is_read_only());
    for line in [
        format!("sort {files} -o out"),
        format!("sort {files} $x"),
        format!("sort {files} *.txt"),
        format!("git log {files} --output=x"),
    ] {
        assert!(!posix(&line).is_read_only(), "{line}");
    }
}
