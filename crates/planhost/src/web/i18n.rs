//! The page's strings: one catalog per language (`assets/<tag>.txt`, `key = text` lines), none
//! inline in the HTML. The language comes from `Accept-Language`, or the person's switch.

use std::collections::HashMap;
use std::sync::OnceLock;

use planhost_core::PolicyRule;

/// The languages the page speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    En,
    ZhCn,
}

const EN: &str = include_str!("assets/en.txt");
const ZH_CN: &str = include_str!("assets/zh-CN.txt");
/// The registry's codes in Chinese (English is the registry's own text, which the host's
/// messages already speak).
const CODES_ZH_CN: &str = include_str!("assets/codes.zh-CN.txt");

impl Lang {
    /// The BCP 47 tag, for `<html lang>` and the switch.
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
        }
    }

    /// The other language (what the switch offers).
    pub(crate) fn other(self) -> Self {
        match self {
            Lang::En => Lang::ZhCn,
            Lang::ZhCn => Lang::En,
        }
    }

    /// `en` or `zh-CN` exactly (the switch's value and cookie).
    pub(crate) fn from_tag(tag: &str) -> Option<Self> {
        match tag {
            "en" => Some(Lang::En),
            "zh-CN" => Some(Lang::ZhCn),
            _ => None,
        }
    }

    /// The first language of an `Accept-Language` list that the page speaks (by `q` order);
    /// English when none.
    pub(crate) fn from_accept_language(header: &str) -> Self {
        let mut best: Option<(f32, Lang)> = None;
        for item in header.split(',') {
            let mut parts = item.split(';');
            let tag = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q=")?.parse::<f32>().ok())
                .unwrap_or(1.0);
            let lang = if tag == "zh" || tag.starts_with("zh-") {
                Some(Lang::ZhCn)
            } else if tag == "en" || tag.starts_with("en-") {
                Some(Lang::En)
            } else {
                None
            };
            if let Some(lang) = lang
                && q > 0.0
                && best.is_none_or(|(bq, _)| q > bq)
            {
                best = Some((q, lang));
            }
        }
        best.map_or(Lang::En, |(_, l)| l)
    }

    /// What an ask's rule means, where the page speaks another language than the host's
    /// reasons (English): the host's sentence is then shown as the detail. `None` in English,
    /// and for a rule that never asks.
    pub(crate) fn ask_meaning(self, rule: PolicyRule) -> Option<&'static str> {
        match self {
            Lang::En => None,
            Lang::ZhCn => ask_meaning_key(rule).map(|key| self.t(key)),
        }
    }

    /// The text for `key`. A key missing from the catalog shows as itself (and a test fails).
    pub(crate) fn t(self, key: &'static str) -> &'static str {
        catalog(self).get(key).copied().unwrap_or(key)
    }

    /// The text for `key` with each `{name}` replaced.
    pub(crate) fn fill(self, key: &'static str, values: &[(&str, &str)]) -> String {
        let mut text = self.t(key).to_owned();
        for (name, value) in values {
            text = text.replace(&format!("{{{name}}}"), value);
        }
        text
    }
}

impl Lang {
    /// What a stable code means, in this language, when the host's own message (English) is
    /// not enough: `None` in English.
    pub(crate) fn code(self, code: &str) -> Option<&'static str> {
        static ZH: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
        match self {
            Lang::En => None,
            Lang::ZhCn => ZH.get_or_init(|| parse(CODES_ZH_CN)).get(code).copied(),
        }
    }
}

/// The catalog key of what an asking rule means (`ask.why.*`), by the rule's family: a
/// Plan-mode shell command that may change files, a Plan-mode subagent, or a permission mode
/// that asks (for a command that may change files, or for any call of the tool).
fn ask_meaning_key(rule: PolicyRule) -> Option<&'static str> {
    let name = rule.as_str();
    if name.ends_with(".shell_may_change") {
        Some("ask.why.plan_shell")
    } else if name.ends_with(".subagent_asks") {
        Some("ask.why.plan_subagent")
    } else if name.ends_with(".shell_by_permission") {
        Some("ask.why.shell_by_permission")
    } else if name.ends_with("_by_permission") {
        Some("ask.why.by_permission")
    } else {
        None
    }
}

fn catalog(lang: Lang) -> &'static HashMap<&'static str, &'static str> {
    static CATALOGS: OnceLock<[HashMap<&'static str, &'static str>; 2]> = OnceLock::new();
    let all = CATALOGS.get_or_init(|| [parse(EN), parse(ZH_CN)]);
    match lang {
        Lang::En => &all[0],
        Lang::ZhCn => &all[1],
    }
}

fn parse(text: &'static str) -> HashMap<&'static str, &'static str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.split_once(" = ")?;
            Some((k.trim(), v.trim()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn every_key_is_in_every_language() {
        let en: BTreeSet<&str> = parse(EN).into_keys().collect();
        let zh: BTreeSet<&str> = parse(ZH_CN).into_keys().collect();
        let only_en: Vec<_> = en.difference(&zh).collect();
        let only_zh: Vec<_> = zh.difference(&en).collect();
        assert!(only_en.is_empty(), "missing in zh-CN: {only_en:?}");
        assert!(only_zh.is_empty(), "missing in en: {only_zh:?}");
        // Every line is a `key = text` line: a typo'd separator would drop a key silently.
        for text in [EN, ZH_CN] {
            for line in text.lines().map(str::trim) {
                if !line.is_empty() && !line.starts_with('#') {
                    assert!(line.contains(" = "), "not a `key = text` line: {line}");
                }
            }
        }
    }

    #[test]
    fn placeholders_match_between_languages() {
        let (en, zh) = (parse(EN), parse(ZH_CN));
        let names = |s: &str| -> BTreeSet<String> {
            s.split('{')
                .skip(1)
                .filter_map(|p| p.split_once('}').map(|(n, _)| n.to_owned()))
                .collect()
        };
        for (key, text) in &en {
            assert_eq!(names(text), names(zh[key]), "{key}");
        }
    }

    #[test]
    fn every_code_of_the_registry_is_said_in_chinese_and_nothing_else() {
        let zh: BTreeSet<&str> = parse(CODES_ZH_CN).into_keys().collect();
        let codes: BTreeSet<&str> = planhost_core::ErrorCode::ALL
            .iter()
            .map(|c| c.as_str())
            .collect();
        let missing: Vec<_> = codes.difference(&zh).collect();
        let unknown: Vec<_> = zh.difference(&codes).collect();
        assert!(missing.is_empty(), "codes.zh-CN.txt lacks {missing:?}");
        assert!(
            unknown.is_empty(),
            "codes.zh-CN.txt has codes the registry does not: {unknown:?}"
        );
        for line in CODES_ZH_CN.lines().map(str::trim) {
            if !line.is_empty() && !line.starts_with('#') {
                assert!(line.contains(" = "), "not a `CODE = text` line: {line}");
            }
        }
        assert_eq!(
            Lang::ZhCn.code("SESSION_NOT_IDLE"),
            Some("只有会话空闲时才能更改模式和配置。")
        );
        assert_eq!(Lang::En.code("SESSION_NOT_IDLE"), None);
    }

    #[test]
    fn every_asking_rule_is_said_in_chinese() {
        // The policy asks through these rules only (`Decision::Ask` in planhost-core's policy).
        let asking = [
            PolicyRule::PlanHostShellMayChange,
            PolicyRule::PlanHostSubagentAsks,
            PolicyRule::AgentShellByPermission,
            PolicyRule::PlanExploreShellByPermission,
            PolicyRule::PlanLiteralShellByPermission,
            PolicyRule::AgentEditByPermission,
            PolicyRule::AgentWebByPermission,
            PolicyRule::AgentMcpByPermission,
            PolicyRule::PlanExploreSubagentByPermission,
        ];
        for rule in asking {
            let zh = Lang::ZhCn.ask_meaning(rule);
            assert!(
                zh.is_some_and(|t| !t.starts_with("ask.why")),
                "{rule}: {zh:?}"
            );
            assert_eq!(Lang::En.ask_meaning(rule), None);
        }
        // Every rule of a family that asks has its meaning.
        for rule in PolicyRule::ALL {
            let name = rule.as_str();
            if name.ends_with("_by_permission")
                || name.ends_with(".shell_may_change")
                || name.ends_with(".subagent_asks")
            {
                assert!(Lang::ZhCn.ask_meaning(*rule).is_some(), "{rule}");
            }
        }
        assert_eq!(Lang::ZhCn.ask_meaning(PolicyRule::PlanWriteDenied), None);
    }

    #[test]
    fn accept_language_picks_a_spoken_language() {
        assert_eq!(Lang::from_accept_language("zh-CN"), Lang::ZhCn);
        assert_eq!(Lang::from_accept_language("zh-TW,zh;q=0.9"), Lang::ZhCn);
        assert_eq!(
            Lang::from_accept_language("fr,en;q=0.5,zh;q=0.8"),
            Lang::ZhCn
        );
        assert_eq!(Lang::from_accept_language("en-GB,zh;q=0.1"), Lang::En);
        assert_eq!(Lang::from_accept_language("de"), Lang::En);
        assert_eq!(Lang::from_accept_language(""), Lang::En);
    }
}
