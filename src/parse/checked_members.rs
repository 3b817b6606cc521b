//! A JSON object's members, found in the one pass that proves the whole text well-formed JSON:
//! how the parser reads each envelope, where serde_json's split into raw values (a stop per
//! string escape, and torch's metrics hold 28 KB strings of escaped quotes) cost more than the
//! rest of a build's parsing.
//!
//! It proves no more than serde_json would: when it answers, serde_json reads the same members
//! from the text (a property test holds the two together on text made to be nearly JSON). Text
//! it does not answer for (not an object, a key with an escape, nesting deeper than
//! [`MAX_NESTING`], anything ill-formed) is left to serde_json, whose error the diagnostic then
//! quotes.

use super::json_text::skip_space;
use super::string_end::{checked_string_end, plain_string_end};

/// The deepest nesting of arrays and objects followed here, inside a member's value: the
/// bundle's own limit, so that a value read here is never too deep to hold as JSON. Deeper text
/// goes to serde_json (which refuses beyond 128 levels).
const MAX_NESTING: usize = super::json_text::MAX_DEPTH;

/// A member of an object that [`checked_object_members`] read.
#[derive(Debug, PartialEq)]
pub struct CheckedMember<'a> {
    pub key: &'a str,
    /// The value's text, without the whitespace around it.
    pub value: &'a str,
    /// Whether [`super::json_text::check`] accepts the value: no number in it is beyond a float
    /// (none nests too deep, by [`MAX_NESTING`]).
    pub holds_as_json: bool,
}

/// The members of the JSON object `text` (whitespace around it allowed), in order, duplicates
/// kept; `None` unless `text` is certainly well-formed JSON whose keys hold no escapes.
pub fn checked_object_members(text: &str) -> Option<Vec<CheckedMember<'_>>> {
    let bytes = text.as_bytes();
    let mut i = skip_space(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::with_capacity(8);
    i = skip_space(bytes, i + 1);
    if bytes.get(i) == Some(&b'}') {
        return (skip_space(bytes, i + 1) == bytes.len()).then_some(members);
    }
    loop {
        let (key, after_colon) = key_and_colon(text, i)?;
        let start = skip_space(bytes, after_colon);
        let (end, holds_as_json) = checked_value_end(bytes, start)?;
        members.push(CheckedMember { key, value: &text[start..end], holds_as_json });
        i = skip_space(bytes, end);
        match bytes.get(i) {
            Some(b',') => i = skip_space(bytes, i + 1),
            Some(b'}') => return (skip_space(bytes, i + 1) == bytes.len()).then_some(members),
            _ => return None,
        }
    }
}

/// The key starting at `i` (its opening quote) and where the text after its colon starts; `None`
/// for a key with an escape (serde_json decodes those) or anything else than `"key" :`.
fn key_and_colon(text: &str, i: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let end = plain_string_end(bytes, i + 1)?;
    let key = &text[i + 1..end - 1];
    let colon = skip_space(bytes, end);
    (bytes.get(colon) == Some(&b':')).then_some((key, colon + 1))
}

/// Where the well-formed JSON value starting at `i` ends, and whether no number in it is beyond
/// a float; `None` if no such value starts there (or it nests deeper than [`MAX_NESTING`]).
/// Containers are followed with a stack of their openers rather than by recursion.
fn checked_value_end(bytes: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut open = [0u8; MAX_NESTING];
    let mut depth = 0;
    let mut holds_as_json = true;
    loop {
        // A value starts at `i`.
        match *bytes.get(i)? {
            b'"' => i = checked_string_end(bytes, i + 1)?,
            opener @ (b'{' | b'[') => {
                let closer = if opener == b'{' { b'}' } else { b']' };
                let first = skip_space(bytes, i + 1);
                if bytes.get(first) == Some(&closer) {
                    i = first + 1;
                } else {
                    *open.get_mut(depth)? = opener;
                    depth += 1;
                    i = if opener == b'{' { skip_space(bytes, member_value(bytes, first)?) } else { first };
                    continue;
                }
            }
            b't' => i = literal_end(bytes, i, b"true")?,
            b'f' => i = literal_end(bytes, i, b"false")?,
            b'n' => i = literal_end(bytes, i, b"null")?,
            b'-' | b'0'..=b'9' => {
                let start = i;
                i = number_end(bytes, i)?;
                holds_as_json &= !super::json_text::beyond_a_float(&bytes[start..i]);
            }
            _ => return None,
        }
        // A value ended at `i`: close what it completes, until a comma calls for the next one.
        loop {
            if depth == 0 {
                return Some((i, holds_as_json));
            }
            i = skip_space(bytes, i);
            match (open[depth - 1], *bytes.get(i)?) {
                (b'{', b',') => {
                    i = skip_space(bytes, member_value(bytes, skip_space(bytes, i + 1))?);
                    break;
                }
                (b'[', b',') => {
                    i = skip_space(bytes, i + 1);
                    break;
                }
                (b'{', b'}') | (b'[', b']') => {
                    depth -= 1;
                    i += 1;
                }
                _ => return None,
            }
        }
    }
}

/// Past the `"key":` of an object's member starting at `i` (keys may hold escapes here: they are
/// only checked, not returned).
fn member_value(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let colon = skip_space(bytes, checked_string_end(bytes, i + 1)?);
    (bytes.get(colon) == Some(&b':')).then_some(colon + 1)
}

fn literal_end(bytes: &[u8], i: usize, literal: &[u8]) -> Option<usize> {
    bytes[i..].starts_with(literal).then_some(i + literal.len())
}

/// Where the JSON number starting at `i` ends: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
/// What follows it is the caller's to check (a digit after a leading zero is not a number's).
fn number_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    let digits = |from: usize| from + bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    if bytes[i] == b'-' {
        i += 1;
    }
    i = match bytes.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i + 1),
        _ => return None,
    };
    if bytes.get(i) == Some(&b'.') {
        let end = digits(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let end = digits(i);
        if end == i {
            return None;
        }
        i = end;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::entry::Fields;
    use proptest::prelude::*;

    /// What serde_json reads of `text` as an envelope: its members, keys decoded, values raw.
    fn serde_members(text: &str) -> Option<Vec<(String, String)>> {
        let Fields(fields) = serde_json::from_str(text).ok()?;
        Some(fields.into_iter().map(|(k, v)| (k.into_owned(), v.get().to_string())).collect())
    }

    fn checked(text: &str) -> Option<Vec<(String, String)>> {
        let members = checked_object_members(text)?;
        for m in &members {
            // What it says of a value, `check` says too.
            assert_eq!(m.holds_as_json, super::super::json_text::check(m.value.as_bytes()).is_ok(), "{:?}", m.value);
        }
        Some(members.into_iter().map(|m| (m.key.to_string(), m.value.to_string())).collect())
    }

    /// Each member's key and value.
    fn pairs(text: &str) -> Option<Vec<(&str, &str)>> {
        checked_object_members(text).map(|m| m.into_iter().map(|m| (m.key, m.value)).collect())
    }

    /// Answers only where serde_json reads the text, and then as it reads it.
    fn agrees(text: &str) -> Result<(), TestCaseError> {
        if let Some(ours) = checked(text) {
            prop_assert_eq!(Some(ours), serde_members(text), "text: {:?}", text);
        }
        Ok(())
    }

    #[test]
    fn reads_an_envelope() {
        let text = r#" {"str": ["/a/b.py", 3], "frame_id": 0, "has_payload": "9f", "x": {"a": [1, -2.5e+3, true, null, false, {}, []]}} "#;
        let members = pairs(text).expect("well-formed");
        assert_eq!(
            members,
            [
                ("str", r#"["/a/b.py", 3]"#),
                ("frame_id", "0"),
                ("has_payload", r#""9f""#),
                ("x", r#"{"a": [1, -2.5e+3, true, null, false, {}, []]}"#),
            ]
        );
        assert_eq!(pairs("{}"), Some(vec![]));
        assert_eq!(pairs(r#"{"a":1,"a":2}"#), Some(vec![("a", "1"), ("a", "2")]));
        // A number beyond a float is well-formed JSON, but no value the bundle holds as JSON.
        let members = checked_object_members(r#"{"a":[1e400],"b":1e300,"c":-0.5E-3}"#).expect("well-formed");
        assert_eq!(members.iter().map(|m| m.holds_as_json).collect::<Vec<_>>(), [false, true, true]);
    }

    #[test]
    fn answers_nothing_for_what_serde_json_refuses_or_decodes() {
        let refused = [
            "",
            "[]",
            r#"{"a":1"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":1e}"#,
            r#"{"a":-}"#,
            r#"{"a":+1}"#,
            r#"{"a":tru}"#,
            r#"{"a":nul}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":{"b"}}"#,
            r#"{"a":{"b":1,}}"#,
            r#"{"a":"x\qy"}"#,
            r#"{"a":"\u12G4"}"#,
            r#"{"a":"\u12"}"#,
            "{\"a\":\"tab\there\"}",
            "{\"a\":\"nul\u{0}\"}",
            r#"{"a":"unclosed}"#,
            r#"{"a":1} x"#,
            r#"{"a":1}}"#,
            r#"{"a":[}"#,
            r#"{"a":{]}"#,
            // A key with an escape is decoded by serde_json: left to it.
            r#"{"k\"ey":1}"#,
        ];
        for text in refused {
            assert_eq!(checked_object_members(text), None, "{text:?}");
        }
        let nested = |depth: usize| format!(r#"{{"a":{}1{}}}"#, "[".repeat(depth), "]".repeat(depth));
        assert_eq!(checked_object_members(&nested(MAX_NESTING + 1)), None);
        assert!(checked_object_members(&nested(MAX_NESTING)).is_some());
    }

    #[test]
    fn escapes_and_controls_across_blocks() {
        // Escapes of every kind, one ending each 64-byte block of the string.
        for pad in 0..70 {
            for escape in [r#"\""#, r#"\\"#, r#"\/"#, r#"\b"#, r#"\f"#, r#"\n"#, r#"\r"#, r#"\t"#, r#"\u00e9"#] {
                let text = format!(r#"{{"k":"{}{escape}z", "n": 1}}"#, "a".repeat(pad));
                assert!(checked_object_members(&text).is_some(), "{text:?}");
                agrees(&text).unwrap();
            }
            let control = format!("{{\"k\":\"{}\u{1f}z\"}}", "a".repeat(pad));
            assert_eq!(checked_object_members(&control), None);
            let bad = format!(r#"{{"k":"{}\xz"}}"#, "a".repeat(pad));
            assert_eq!(checked_object_members(&bad), None);
        }
    }

    /// JSON values of every kind, serialized with or without spaces.
    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(serde_json::Value::from),
            "[a-z\"\\\\/\u{1}\u{e9}\n]{0,80}".prop_map(serde_json::Value::from),
        ];
        let value = leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..5)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        });
        (proptest::collection::btree_map("[a-z_]{1,10}", value, 0..6), any::<bool>()).prop_map(|(members, pretty)| {
            let object = serde_json::Value::Object(members.into_iter().collect());
            if pretty { serde_json::to_string_pretty(&object).unwrap() } else { object.to_string() }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(8192))]

        /// A member's value made of JSON's tokens in any order (numbers' parts among them):
        /// wherever the check answers, serde_json reads the same.
        #[test]
        fn token_soup_is_read_only_as_serde_json_reads_it(
            tokens in proptest::collection::vec(prop::sample::select(vec![
                "{", "}", "[", "]", ":", ",", " ", "\"k\"", "\"\\u00e9\"", "0", "1", "-", ".", "e", "E", "+",
                "true", "fals", "null", "\"", "\\",
            ]), 1..8),
        ) {
            agrees(&format!(r#"{{"k":{}}}"#, tokens.concat()))?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Well-formed objects are read, member for member, as serde_json reads them.
        #[test]
        fn reads_well_formed_objects_as_serde_json_does(text in json_text()) {
            prop_assert!(checked(&text).is_some(), "text: {:?}", text);
            agrees(&text)?;
        }

        /// Text one edit away from JSON: wherever the check answers, serde_json reads the same.
        #[test]
        fn never_answers_for_text_serde_json_refuses(
            text in json_text(),
            edits in proptest::collection::vec(
                (any::<prop::sample::Index>(), 0u8..3, prop::sample::select(
                    b"{}[]:,\"\\ -+.eE0123456789tfnrlu/\x01\x1fa".to_vec())),
                1..4),
        ) {
            let mut bytes = text.into_bytes();
            for (at, how, byte) in edits {
                let at = at.index(bytes.len() + 1);
                match how {
                    0 => bytes.insert(at, byte),
                    1 if at < bytes.len() => { bytes.remove(at); }
                    _ if at < bytes.len() => bytes[at] = byte,
                    _ => bytes.push(byte),
                }
            }
            if let Ok(text) = String::from_utf8(bytes) {
                agrees(&text)?;
            }
        }
    }
}
