//! Dataset names: exact strings, shown safely.
//!
//! A dataset's name is compared exactly (byte for byte) by the ledger, so
//! `sensors` and `Sensors ` would be two datasets with two budgets. To keep a
//! typo from silently opening a second budget, a new name that equals an
//! existing one after [`fold`] is refused, naming the existing one.

/// The form under which two names are "the same name" for a human: without
/// surrounding (Unicode) whitespace, Unicode case-folded. Folding is
/// approximated by upper-casing and then lower-casing, so that e.g. `ß`,
/// `SS` and `ss` fold alike, as do `Σ`, `σ` and `ς`.
pub fn fold(name: &str) -> String {
    name.trim().to_uppercase().to_lowercase()
}

/// `name` in single quotes, safe to print on a terminal: control
/// characters (C0, DEL, C1) and the bidirectional-text controls are shown
/// as `\u{…}` escapes and a backslash as `\\`, so that the printed form
/// determines the name exactly and cannot move the cursor, change colours
/// or reorder the line. Every other character is printed as it is.
pub fn quoted(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    out.push('\'');
    out.push_str(&escaped(name));
    out.push('\'');
    out
}

/// `text` with control characters escaped as in [`quoted`], without quotes.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if c.is_control() || is_bidi_control(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// The Unicode bidirectional formatting characters (marks, embeddings,
/// overrides, isolates), which can make a printed line read differently
/// from its content.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_ignores_case_and_surrounding_whitespace_only() {
        assert_eq!(fold("  Sensors\t"), fold("sensors"));
        assert_eq!(fold("STRASSE"), fold("straße"));
        assert_eq!(fold("ΟΔΟΣ"), fold("οδος"));
        assert_eq!(fold("οδός"), fold("ΟΔΌΣ"));
        assert_ne!(fold("sensors"), fold("sen sors"));
        assert_ne!(fold("sensors-1"), fold("sensors-2"));
    }

    #[test]
    fn control_characters_are_escaped_unambiguously() {
        assert_eq!(quoted("a\u{1b}[31mb"), "'a\\u{1b}[31mb'");
        assert_eq!(quoted("x\ny\u{7f}\u{85}"), "'x\\u{a}y\\u{7f}\\u{85}'");
        assert_eq!(quoted("abc\u{202e}def"), "'abc\\u{202e}def'");
        // A literal backslash-u in a name cannot pass for an escape.
        assert_eq!(quoted("a\\u{1b}"), "'a\\\\u{1b}'");
        assert_eq!(quoted("µg/m³ Zürich"), "'µg/m³ Zürich'");
    }
}
