//! Plans rendered server-side from their exact bytes, inert: raw HTML is shown as text, links
//! keep only `http`, `https`, `mailto` and in-page targets, and images become their alt text (a
//! plan never makes the page fetch anything).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// The HTML of `markdown`, safe to put inside the page (pulldown-cmark escapes text and
/// attributes; raw HTML was turned into text above, so the result is markup by construction).
pub(crate) fn render(markdown: &str) -> maud::Markup {
    // No footnotes: their labels become element ids, and a plan could name one after a part of
    // the page the script updates.
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut in_image = 0usize;
    // Every event not named here passes through unchanged, by design.
    #[allow(clippy::wildcard_enum_match_arm)]
    let events = Parser::new_ext(markdown, options).filter_map(move |event| match event {
        // Raw HTML, block or inline, becomes visible text: escaped by the HTML writer.
        Event::Html(html) | Event::InlineHtml(html) => Some(Event::Text(html)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Some(Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        })),
        // An image's alt text is rendered as text; the image itself is dropped.
        Event::Start(Tag::Image { .. }) => {
            in_image += 1;
            None
        }
        Event::End(TagEnd::Image) => {
            in_image = in_image.saturating_sub(1);
            None
        }
        other => Some(other),
    });
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    maud::PreEscaped(html)
}

/// The link target if its scheme is one a plan may point to; `#` otherwise.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lowered: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let scheme = lowered
        .split_once(':')
        .map(|(s, _)| s)
        .filter(|s| !s.contains(['/', '?', '#']));
    match scheme {
        None | Some("http" | "https" | "mailto") => url,
        Some(_) => CowStr::Borrowed("#"),
    }
}

#[cfg(test)]
mod tests {
    fn render(markdown: &str) -> String {
        super::render(markdown).into_string()
    }

    #[test]
    fn raw_html_and_scripts_render_as_text() {
        let html = render(
            "# Plan\n\n<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)> there\n",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn only_safe_link_schemes_survive() {
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html,<b>x</b>",
            "vbscript:x",
        ] {
            let html = render(&format!("[x]({bad}) and <{bad}>"));
            let lower = html.to_ascii_lowercase();
            for scheme in [
                "href=\"javascript",
                "href=\"java\tscript",
                "href=\"data:",
                "href=\"vbscript",
            ] {
                assert!(!lower.contains(scheme), "{bad}: {html}");
            }
        }
        assert!(render("[x](javascript:alert(1))").contains("href=\"#\""));
        for good in [
            "https://example.com/a",
            "http://x",
            "mailto:a@b",
            "#step-2",
            "docs/a.md",
        ] {
            let html = render(&format!("[x]({good})"));
            assert!(
                !html.contains("href=\"#\"") || good.starts_with('#'),
                "{good}: {html}"
            );
        }
    }

    #[test]
    fn a_plan_sets_no_element_ids() {
        let html = render("see [^sessions-box]\n\n[^sessions-box]: gotcha\n\n# Heading {#cards}\n");
        assert!(!html.contains("id="), "{html}");
    }

    #[test]
    fn images_become_their_alt_text() {
        let html = render("![the diagram](https://tracker.example/p.png)");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("the diagram"), "{html}");
    }

    #[test]
    fn markdown_structure_renders() {
        let html = render("# Title\n\n- [ ] one\n- [x] two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("checkbox"), "{html}");
    }
}
