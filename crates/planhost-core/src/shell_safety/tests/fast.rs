//! The fast parser: it takes the common shapes, and wherever it answers its tree is
//! brush-parser's.

use proptest::prelude::*;
use proptest::strategy::ValueTree;

use super::{MAY_CHANGE, READ_ONLY};
use crate::shell_safety::fast::{self, Parsed};
use crate::shell_safety::syntax::Script;
use crate::shell_safety::words;
use crate::shell_safety::{from_brush, fuzzing};

/// The fast parser's tree, if it built one.
fn fast_tree(line: &str) -> Option<Script<'_>> {
    match fast::parse(line) {
        Parsed::Tree(tree) => Some(tree),
        Parsed::Refused | Parsed::Unknown => None,
    }
}

/// Where the fast parser answers, brush-parser builds the same tree, or refuses the line too.
fn agrees(line: &str) -> Result<(), TestCaseError> {
    fuzzing::parsers_agree(line).map_err(TestCaseError::fail)
}

/// Words for plain lines: readers, writers, options that make readers write, wrappers, the
/// `-c` of `sh -c`, assignments, reserved words (which send the line to the parser).
const PLAIN_WORDS: &[&str] = &[
    "ls",
    "-la",
    "src",
    "cat",
    "README.md",
    "git",
    "status",
    "log",
    "-3",
    "push",
    "commit",
    "find",
    ".",
    "-name",
    "x",
    "-delete",
    "-exec",
    "rm",
    "sed",
    "-i",
    "-n",
    "1,5p",
    "sort",
    "-o",
    "out",
    "wc",
    "-l",
    "head",
    "rg",
    "--type",
    "rust",
    "bash",
    "sh",
    "-c",
    "env",
    "A=1",
    "LC_ALL=C",
    "PATH=/x",
    "PAGER=cat",
    "xargs",
    "timeout",
    "5",
    "nice",
    "command",
    "-v",
    "eval",
    "source",
    "nohup",
    "export",
    "tee",
    "a.txt",
    "echo",
    "true",
    "/bin/ls",
    "./x",
    "if",
    "then",
    "fi",
    "do",
    "done",
    "for",
    "in",
    "time",
    "while",
    "case",
    "esac",
    "coproc",
    "function",
    "select",
    "=x",
    "x=",
    "%1",
    "@a",
    "+b",
    "a:b",
    "1",
    "22",
];

const PLAIN_SEPARATORS: &[&str] = &[
    " ", " ", " ", "  ", "\t", " | ", "|", " || ", "&&", " && ", ";", "; ", "\n", " & ", "&", "|&",
    ";;", "|||", "&&&", " ;\n", "\n\n",
];

fn plain_line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", " ", "\n", ";"]),
        prop::collection::vec(
            (
                prop::sample::select(PLAIN_WORDS.to_vec()),
                prop::sample::select(PLAIN_SEPARATORS.to_vec()),
            ),
            1..10,
        ),
        prop::sample::select(vec!["", " ", "\n", ";", "|", "&&"]),
    )
        .prop_map(|(lead, parts, trail)| {
            let mut line = lead.to_owned();
            for (i, (word, separator)) in parts.iter().enumerate() {
                if i > 0 {
                    line.push_str(separator);
                }
                line.push_str(word);
            }
            line.push_str(trail);
            line
        })
}

/// The shapes of the benchmark and of everyday exploration: the fast parser takes them.
const TAKEN: &[&str] = &[
    "ls -la src",
    "git status && git log -3",
    "cat a | wc -l",
    "rg -n x src; ls\nls",
    "find . -name x -delete",
    "sed -i s/a/b/ f || ls",
    "bash -c ls",
    "  ls  \n",
    "ls &",
    "ls;",
    "A=1 ls",
    "ls 'a b'",
    "ls > f",
    "ls $x",
    "# just a comment",
    "git log -p -3 -- src/lib.rs",
    "rg -n 'fn main' --type rust src",
    "find . -name '*.rs' -type f",
    "cat a 2>/dev/null || echo none",
    "echo \"$(git rev-parse HEAD)\"",
    "diff <(sort a) <(sort b)",
    "jq '.dependencies' package.json",
    "cat <<'EOF'\nsome text here\nEOF",
    "cat <<EOF | wc -l\n$x\nEOF\nls",
    "for f in *.md; do wc -l \"$f\"; done",
    "LC_ALL=C sort f | uniq -c",
    "echo x > out.txt",
    "( ls ) && { pwd; }",
    "if [ -f x ]; then cat x; elif true; then :; else echo no; fi",
    "while read -r line; do echo \"$line\"; done < f",
    "until false; do ls; done 2>&1",
    "! grep -q foo f",
    "ls ~ ~+ ~- ${HOME} ${#x} `pwd`",
    "cat < <(ls) > >(cat)",
    "echo a\\ b 'c\td' \"e\\\"f\"",
    "ls &>/dev/null; ls &>>log; grep x <<< \"$y\"",
];

/// Shapes the fast parser leaves to brush-parser.
const LEFT: &[&str] = &[
    "ls |& cat",
    "time ls",
    "ls;; ls",
    "case x in a) ls;; esac",
    "[[ -f x ]]",
    "(( i++ ))",
    "echo $((1 + 2))",
    "f() { ls; }",
    "function f { ls; }",
    "coproc ls",
    "a=(1 2)",
    "a[1]=x ls",
    "echo $'a\\tb'",
    "cat <<-EOF\n\tx\nEOF",
    "cat <<EOF > \"$out\"\nx\nEOF",
    "ls \\\n -la",
    "echo $(ls\t-la)",
    "echo $(ls # c\n)",
    "echo $(cat <<EOF\nx\nEOF\n)",
    "ls !(x)",
    "ls a<(ls)",
    "ls\r",
    "{ ls; } fi",
    "for x; do ls; done",
    "for ((i=0; i<3; i++)); do ls; done",
    "select x in a; do ls; done",
    // Found by the fuzz target: brush-parser refuses a process substitution after `>&`.
    "cat < <(ls) >& >(cat)",
    "ls >> >(cat)",
    // And: `>((` is arithmetic to brush-parser's tokenizer, where `<<` starts no here-document.
    "cat >((cat <<EOF\nhe))!o",
    // And: an ANSI-C quote opens after an escaped `$` too.
    "\\|\\\\\\\\\\$'\\\\\\\\\\\\\\$\\\\\\'\\{/}",
    "echo \\$'a'",
];

/// Lines cut short: brush-parser refuses them, and the fast parser says so without it.
const CUT_SHORT: &[&str] = &[
    "cat <<'EOF'\nsome text\nEOF | ls",
    "{ cat <<'EOF'\nsome text here\nEOF; }",
    "ls && cat <<E\nx\nE \n",
    "( cat <<'EOF'\nx\nEOF )\nls",
    "( ls",
    "{ ls; ",
    "if ls; then pwd",
    "for f in a b; do ls",
    "while ls; do",
    "ls &&",
    "ls ||\n",
    "ls |",
    "echo $(ls",
    "echo \"$(ls | wc",
    "diff <(sort a",
];

#[test]
fn the_fast_parser_takes_the_common_shapes() {
    for line in TAKEN {
        let tree = fast_tree(line);
        assert!(tree.is_some(), "{line:?} should take the fast parser");
        assert_eq!(tree, from_brush::parse(line), "{line:?}");
    }
    for line in LEFT {
        let parsed = fast::parse(line);
        assert_eq!(parsed, Parsed::Unknown, "{line:?} should take brush-parser");
    }
}

#[test]
fn a_line_cut_short_is_refused_without_brush() {
    for line in CUT_SHORT {
        assert_eq!(fast::parse(line), Parsed::Refused, "{line:?}");
        assert_eq!(from_brush::parse(line), None, "{line:?}");
    }
}

#[test]
fn the_tables_parse_alike() {
    let lines = READ_ONLY
        .iter()
        .copied()
        .chain(MAY_CHANGE.iter().map(|(line, _)| *line));
    for line in lines {
        agrees(line).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Pieces of shell syntax, each a token or a construct, for lines that mostly parse.
const SYNTAX: &[&str] = &[
    "ls",
    "-la",
    "cat",
    "f",
    "git",
    "log",
    "echo",
    "x",
    "A=1",
    "x=$(ls)",
    "b+=2",
    "'a b'",
    "\"a $x\"",
    "\"$(git rev-parse HEAD)\"",
    "$x",
    "${x}",
    "${#x}",
    "${x:-y}",
    "$(ls)",
    "$( ls | wc -l )",
    "`pwd`",
    "*.rs",
    "src/*",
    "a\\ b",
    "~",
    "2>/dev/null",
    "2>&1",
    ">&2",
    ">f",
    ">>f",
    "<f",
    "<>f",
    ">|f",
    "&>f",
    "&>>f",
    "<<<w",
    "<(ls)",
    ">(cat)",
    "< <(ls)",
    "> >(cat)",
    ";",
    "&",
    "&&",
    "||",
    "|",
    "\n",
    "(",
    ")",
    "{",
    "}",
    "if",
    "then",
    "elif",
    "else",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "until",
    "!",
    "# c",
    "\t",
    "case",
    "esac",
    ";;",
    "((",
    "))",
    "$((1))",
    "[[",
    "]]",
    "time",
    "<<EOF\nbody $x\nEOF\n",
    "<<'EOF'\nbody\nEOF\n",
    "<<\"E\"\nb\nE\n",
    "\\\n",
    "$'x'",
    "f()",
    "a[1]=2",
    "a=(1)",
    "|&",
    "<<-EOF\n\tb\nEOF\n",
    "\"\t\"",
    "'\t'",
    "$(ls\t)",
    "$(#)",
    "${x y}",
    "$",
    "\"",
    "'",
    "`",
    "\\",
];

/// A line of syntax pieces joined by a blank or nothing.
fn syntax_line() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (prop::sample::select(SYNTAX.to_vec()), prop::bool::ANY),
        1..16,
    )
    .prop_map(|parts| {
        let mut line = String::new();
        for (piece, blank) in parts {
            line.push_str(piece);
            if blank {
                line.push(' ');
            }
        }
        line
    })
}

/// Commands that parse, to compose.
const COMMANDS: &[&str] = &[
    "ls -la src",
    "cat README.md",
    "git status --porcelain",
    "rg -n 'fn main' --type rust src",
    "cat a 2>/dev/null",
    "echo \"$(git rev-parse HEAD)\"",
    "diff <(sort a) <(sort b)",
    "wc -l src/*.rs",
    "LC_ALL=C sort f",
    "echo x > out.txt",
    "echo ${x:-y} `pwd` $HOME",
    "x=$(ls | head -1) y=2",
    "grep x <<< \"$y\"",
    "cat < <(ls) 2>&1",
];

#[derive(Debug, Clone)]
enum Shape {
    Command(usize),
    Seq(Box<Shape>, &'static str, Box<Shape>),
    Subshell(Box<Shape>),
    Group(Box<Shape>),
    If(Box<Shape>, Box<Shape>, Option<Box<Shape>>),
    While(Box<Shape>, Box<Shape>),
    For(Box<Shape>),
    Substitution(Box<Shape>),
    Redirected(Box<Shape>),
    HereDoc(usize),
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        (0..COMMANDS.len()).prop_map(Shape::Command),
        (0..COMMANDS.len()).prop_map(Shape::HereDoc),
    ];
    leaf.prop_recursive(4, 32, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec![";", "&&", "||", "|", "\n", "&", " ;\n", "; "]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| Shape::Seq(Box::new(a), op, Box::new(b))),
            inner.clone().prop_map(|a| Shape::Subshell(Box::new(a))),
            inner.clone().prop_map(|a| Shape::Group(Box::new(a))),
            (
                inner.clone(),
                inner.clone(),
                prop::option::of(inner.clone())
            )
                .prop_map(|(a, b, c)| Shape::If(
                    Box::new(a),
                    Box::new(b),
                    c.map(Box::new)
                )),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Shape::While(Box::new(a), Box::new(b))),
            inner.clone().prop_map(|a| Shape::For(Box::new(a))),
            inner.clone().prop_map(|a| Shape::Substitution(Box::new(a))),
            inner.prop_map(|a| Shape::Redirected(Box::new(a))),
        ]
    })
}

/// Renders a shape; a here-document ends its line, so what follows it starts a new one.
fn render(shape: &Shape) -> String {
    let command = |i: &usize| COMMANDS.get(*i).copied().unwrap_or("ls");
    let end = |text: String| {
        if text.ends_with('\n') {
            text
        } else {
            text + "\n"
        }
    };
    match shape {
        Shape::Command(i) => command(i).to_owned(),
        Shape::HereDoc(i) => format!("cat <<'EOF' | {}\nline $x\nEOF\n", command(i)),
        Shape::Seq(a, op, b) => {
            let a = render(a);
            if a.ends_with('\n') {
                format!("{a}{}", render(b))
            } else {
                format!("{a} {op} {}", render(b))
            }
        }
        Shape::Subshell(a) => format!("( {})", end(render(a))),
        Shape::Group(a) => format!("{{ {}}}", end(render(a))),
        Shape::If(a, b, None) => format!("if {}then {}fi", end(render(a)), end(render(b))),
        Shape::If(a, b, Some(c)) => format!(
            "if {}then {}else {}fi",
            end(render(a)),
            end(render(b)),
            end(render(c))
        ),
        Shape::While(a, b) => format!(
            "while {}do {}done 2>/dev/null",
            end(render(a)),
            end(render(b))
        ),
        Shape::For(a) => format!("for f in *.md \"$x\"; do {}done", end(render(a))),
        Shape::Substitution(a) => format!("echo \"$({})\"", render(a).replace('\n', " ; ")),
        Shape::Redirected(a) => format!("{{ {}}} >/dev/null", end(render(a))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Lines that parse: the fast parser takes most (here-documents inside a compound
    /// command aside) and agrees wherever it does.
    #[test]
    fn fast_parser_agrees_with_brush(shape in shape()) {
        agrees(&render(&shape))?;
    }

    /// Pieces of syntax in any order, most of them not a script at all.
    #[test]
    fn fast_parser_agrees_on_syntax_soup(line in syntax_line()) {
        agrees(&line)?;
    }

    /// Plain lines (the old plain-word path's shapes).
    #[test]
    fn fast_parser_agrees_on_plain_lines(line in plain_line()) {
        agrees(&line)?;
    }

    /// Arbitrary strings over the shell's special characters.
    #[test]
    fn fast_parser_agrees_on_any_shell_bytes(line in "[a-z0-9 \\t\\n;|&<>(){}$`'\"\\\\#=*!~-]{0,40}") {
        agrees(&line)?;
    }
}

#[test]
fn composed_lines_mostly_take_the_fast_parser() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = shape();
    let (mut taken, mut total) = (0, 0);
    for _ in 0..500 {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let line = render(&tree.current());
        total += 1;
        if fast::parse(&line) != Parsed::Unknown {
            taken += 1;
        }
    }
    assert!(
        taken * 2 > total,
        "only {taken} of {total} composed lines took the fast parser"
    );
}

/// [`words::quoted_word`]'s answer, where it gives one, is brush-parser's word parser's.
fn word_agrees(word: &str) -> Result<(), TestCaseError> {
    fuzzing::word_agrees(word).map_err(TestCaseError::fail)
}

#[test]
fn quoted_words_skip_the_word_parser() {
    for word in [
        "'fn main'",
        "'*.rs'",
        "\"$f\"",
        "\"dir/$x\"",
        "src/*.rs",
        "HEAD~1",
        "~/x",
        "a\\ b",
        "''",
        "\"\"",
        "${HOME}",
        "'a'\"b\"c",
    ] {
        assert!(words::quoted_word(word).is_some(), "{word:?}");
        word_agrees(word).unwrap_or_else(|e| panic!("{e}"));
    }
    for word in [
        "$(ls)",
        "`ls`",
        "a{b,c}",
        "[ab]",
        "$1",
        "${x:-y}",
        "\"a\\\"b\"",
        "$'x'",
        // Found by the fuzz target: the brace-expansion check reads quoted text too.
        "%p'l[$exec${x:p',}",
    ] {
        assert!(words::quoted_word(word).is_none(), "{word:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn quoted_words_agree_with_the_word_parser(word in "[a-z_*?'\"\\\\$~{}()\\[\\]./=: -]{0,12}") {
        word_agrees(&word)?;
    }
}

/// Found by the `shell_classifier` fuzz target: brush-parser took 34 s on this 45-byte line
/// (its time doubles with each nested `(`). It is refused before brush-parser sees it.
#[test]
fn deep_parentheses_are_refused_before_brush() {
    let line = "f;\0}ols; ((((((((((d((dk(( ((((((((((dk((((dk(((dkne";
    let verdict = crate::shell_safety::classify_command(line, crate::Dialect::Posix);
    assert_eq!(
        verdict.reason().map(ToString::to_string).as_deref(),
        Some("the command nests parentheses too deeply to check")
    );
    // The fast parser still takes deep nesting in the shapes it reads.
    let nested = format!("{}ls{}", "( ls; ".repeat(10), " )".repeat(10));
    assert!(fast_tree(&nested).is_some(), "{nested}");
}

/// Found by the `shell_classifier` fuzz target: brush-parser's word parser took over 10 s on
/// this here-document body (its time grows some twentyfold with each `${` left unclosed inside
/// another); with the quotes, its braces look balanced to a naive count. Such a text is refused
/// before the word parser sees it; a body with only `$NAME` and `${NAME}` skips it.
#[test]
fn many_complex_expansions_are_refused_before_the_word_parser() {
    let body =
        "$(uni[${x8Pni[rm  fx<<EOF[${x8Pni[rm  fx<<EOF\n${x@Pi[${x8Pni[${x//@P}\0}\0}v(rm \n";
    for line in [
        format!("cat <<EOF\n{body}EOF"),
        format!("cat <<EOF\n{}\nEOF", "${x['}'".repeat(6)),
        format!("echo \"{}\"", "${a:-1} ".repeat(4)),
        // Also found by it: a bracket glob, `${x[` and `(` multiply (140 ms for 76 bytes).
        "e[k${ghd[$\"yx:${!x[Tokmend[$\"yx:${!x[Tokmen::Oper}(-$d(+(dm$\"::Oper}(-$d(+(dm$\"my)}"
            .to_owned(),
    ] {
        let verdict = crate::shell_safety::classify_command(&line, crate::Dialect::Posix);
        assert_eq!(
            verdict.reason().map(ToString::to_string).as_deref(),
            Some("a word or here-document has too many expansions to check"),
            "{line:?}"
        );
    }
    assert!(words::runs_nothing(
        "hello $HOME ${USER} $1 $@ \\$(x) 5$ \n"
    ));
    assert!(!words::runs_nothing("a $(date)"));
    assert!(!words::runs_nothing("a `date`"));
    assert!(!words::runs_nothing("${x:-y}"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn plain_here_documents_agree_with_the_word_parser(body in "[a-z_ $`'\"\\\\{}()\\[\\]@#!?*\\n0-9-]{0,30}") {
        fuzzing::heredoc_agrees(&body).map_err(TestCaseError::fail)?;
    }
}

/// Found by the `shell_classifier` fuzz target: a here-document body with an unclosed `$(`
/// and twenty-odd `(` took brush-parser's word parser over 10 s; the same bound on `(` as for
/// lines applies to the texts its word parser reads.
#[test]
fn deep_parentheses_in_a_here_document_are_refused_before_the_word_parser() {
    let line = "cat <<EOF\n$(rm -rfprint:?}(((((((((((((((((((((((v x~{HSME} (${7#x= `%&>>\nEOF";
    let verdict = crate::shell_safety::classify_command(line, crate::Dialect::Posix);
    assert_eq!(
        verdict.reason().map(ToString::to_string).as_deref(),
        Some("the command nests parentheses too deeply to check")
    );
}

/// Found by the `shell_classifier` fuzz target: brush-parser 0.4's tokenizer never returns on
/// `<<''` then a blank at the end of a line (its token queue grows without bound). Such a tag is
/// refused before brush-parser sees the line; the test gives up after 10 s instead of hanging.
#[test]
fn an_empty_here_document_tag_is_refused_before_brush() {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let verdicts: Vec<_> = ["<<''|\t\t", "cat <<'' ", "cat <<- \"\"\t", "cat <<$'' "]
            .iter()
            .map(|line| crate::shell_safety::classify_command(line, crate::Dialect::Posix))
            .collect();
        let _ = send.send(verdicts);
    });
    let verdicts = receive
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the classifier answers");
    for verdict in verdicts {
        assert_eq!(
            verdict.reason().map(ToString::to_string).as_deref(),
            Some("could not parse the command line")
        );
    }
}
