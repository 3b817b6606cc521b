//! JSON text from the log, made safe to parse and to copy into a bundle: lone surrogate escapes
//! kept as text, and the limits of JSON readers (nesting depth, number range) found before a
//! reader of the bundle meets them.
//!
//! Why this is needed: serde_json skips a value it is not asked to build (a `RawValue`, an
//! ignored field) without checking three things it refuses when it builds one: `\uD800`–`\uDFFF`
//! escapes that do not form a pair, nesting deeper than 127 levels, and numbers beyond the range
//! of a 64-bit float. So text accepted while parsing a log could be written into a bundle that
//! its own readers then refuse. And a value from the log is nested deeper still in the bundle
//! file that holds it (an index row, a table's row), hence [`MAX_DEPTH`].

use std::borrow::Cow;

use std::sync::LazyLock;

use memchr::memmem;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::entry::Fields;
use super::string_end::string_end;

/// The deepest nesting of arrays and objects in JSON from a log that the bundle holds as JSON
/// (deeper JSON is kept as text). serde_json, the bundle's Rust reader and `validate`, reads 127
/// levels; the files that hold a value from the log nest it a few levels deeper (a metrics table
/// row four), so this leaves them room.
pub const MAX_DEPTH: usize = 100;

/// 2^53: the largest magnitude up to which every integer is exact in a 64-bit float (and in
/// JavaScript). A time, duration, size or count beyond it is not a real one.
pub const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

/// A number read from the log as a time, duration, size or count, when it can be one: finite
/// and within ±2^53 ([`MAX_EXACT`]). Sums and differences of such numbers stay finite.
pub fn usable_number(x: f64) -> Option<f64> {
    (x.is_finite() && x.abs() <= MAX_EXACT).then_some(x)
}

/// Finds `\\u`; made once, as every header and many payloads are searched.
static UNICODE_ESCAPE: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"\\u"));

/// Keeps lone surrogate escapes as text: each `\uD800`–`\uDFFF` escape that is not half of a
/// valid pair (high then low) gets its backslash escaped, so the string holds the six characters
/// `\udce9` instead of a code point no UTF-8 string can hold. Python's `json.dumps` writes such
/// escapes for every byte of a file name that is not UTF-8. A valid pair, an escaped backslash
/// followed by `u` (`\\udce9`) and every other byte are left alone; without a lone surrogate the
/// text is returned as it is (one `memmem` scan).
pub fn escape_lone_surrogates(text: &[u8]) -> Cow<'_, [u8]> {
    let mut escaped: Option<Vec<u8>> = None;
    // `text[..copied]` is already in `escaped`.
    let mut copied = 0;
    let mut pos = 0;
    while let Some(found) = UNICODE_ESCAPE.find(&text[pos..]) {
        let at = pos + found;
        pos = at + 2;
        if is_escaped(text, at) {
            continue;
        }
        let Some(unit) = hex_unit(text, at + 2) else { continue };
        pos = at + 6;
        if (0xD800..0xDC00).contains(&unit) && low_surrogate_at(text, at + 6) {
            pos = at + 12;
            continue;
        }
        if !(0xD800..0xE000).contains(&unit) {
            continue;
        }
        let out = escaped.get_or_insert_with(|| Vec::with_capacity(text.len() + 16));
        out.extend_from_slice(&text[copied..at]);
        out.push(b'\\');
        copied = at;
    }
    match escaped {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.extend_from_slice(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// [`escape_lone_surrogates`] of a `str` (an ASCII backslash added before an ASCII `\` keeps it
/// UTF-8).
pub fn escape_lone_surrogates_str(text: &str) -> Cow<'_, str> {
    match escape_lone_surrogates(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8(bytes).expect("only ASCII backslashes were added")),
    }
}

/// Whether the backslash at `at` is itself escaped: an odd number of backslashes before it.
fn is_escaped(text: &[u8], at: usize) -> bool {
    text[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

/// The code unit of the four hex digits at `at`, in either case.
fn hex_unit(text: &[u8], at: usize) -> Option<u16> {
    let digits = text.get(at..at + 4)?;
    digits.iter().try_fold(0u16, |unit, &b| Some(unit << 4 | (b as char).to_digit(16)? as u16))
}

/// Whether a `\uDC00`–`\uDFFF` escape starts at `at`.
fn low_surrogate_at(text: &[u8], at: usize) -> bool {
    text.get(at..at + 2) == Some(b"\\u") && hex_unit(text, at + 2).is_some_and(|u| (0xDC00..0xE000).contains(&u))
}

/// Why JSON text that is otherwise well-formed is not held as JSON: serde_json would refuse it,
/// or the file holding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Arrays and objects nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A number beyond the range of a 64-bit float (`1e400`, a 400-digit integer).
    NumberOutOfRange,
    /// Anything else serde_json said (not expected of text that was parsed as a raw value and
    /// had its lone surrogates escaped).
    Other(String),
}

impl Refused {
    /// What a reader would make of `error`, from serde_json's message (its error codes are not
    /// public; unit tests pin the messages).
    pub fn of(error: &serde_json::Error) -> Refused {
        let message = error.to_string();
        if message.starts_with(TOO_DEEP) || message.starts_with("recursion limit exceeded") {
            Refused::TooDeep
        } else if message.starts_with("number out of range") {
            Refused::NumberOutOfRange
        } else {
            Refused::Other(message)
        }
    }

    /// The diagnostic kind for text kept unparsed for this reason.
    pub fn kind(&self) -> crate::schema::DiagnosticKind {
        use crate::schema::DiagnosticKind;
        match self {
            Refused::TooDeep => DiagnosticKind::TooDeep,
            Refused::NumberOutOfRange => DiagnosticKind::OutOfRange,
            Refused::Other(_) => DiagnosticKind::BadJson,
        }
    }

    /// Why, in words, for a diagnostic about `what` (e.g. "metadata").
    pub fn describe(&self, what: &str) -> String {
        match self {
            Refused::TooDeep => {
                format!("{what} is nested deeper than {MAX_DEPTH} levels, more than a bundle holds as JSON")
            }
            Refused::NumberOutOfRange => {
                format!("{what} holds a number beyond the range of a 64-bit float, which JSON readers refuse")
            }
            Refused::Other(message) => format!("{what} cannot be read as JSON: {message}"),
        }
    }
}

/// What can be held as JSON of text refused whole: of an object, each member that can be as its
/// value and each other one as a string of its text (members are read as raw values, which have
/// no depth limit); null for anything but an object. What the analysis sees of metadata kept as
/// text, so that an artifact keeps its name and a metrics entry its times.
pub fn shallow_value(text: &str) -> Value {
    let Ok(Fields(members)) = serde_json::from_str::<Fields>(text) else { return Value::Null };
    let held = |raw: &RawValue| parse(raw.get()).unwrap_or_else(|_| Value::String(raw.get().into()));
    Value::Object(members.into_iter().map(|(key, raw)| (key.into_owned(), held(raw))).collect())
}

/// Parses JSON text from the log, refusing what the bundle cannot hold as JSON (nested deeper
/// than [`MAX_DEPTH`], a number beyond a float) as it refuses text that is no JSON.
pub fn parse(text: &str) -> Result<Value, Refused> {
    match plain_scalar(text) {
        Some(value) => Ok(value),
        None => parse_from(serde_json::Deserializer::from_str(text)),
    }
}

/// A scalar in the one spelling serde_json reads it from, built without a parser: `null`,
/// `true`, `false`, an unsigned integer of up to 19 digits, a string with no escape and no
/// control character. Most members of the metadata tables read one by one are such (a tensor's
/// dtype, a compile's counts); floats are left to serde_json, whose rounding the bundle keeps.
fn plain_scalar(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    match *bytes.first()? {
        b'n' | b't' | b'f' => match text {
            "null" => Some(Value::Null),
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        b'"' => plain_string(text).map(|plain| Value::String(plain.to_string())),
        b'0' => (bytes.len() == 1).then(|| Value::from(0u64)),
        b'1'..=b'9' if bytes.len() <= 19 && bytes.iter().all(u8::is_ascii_digit) => {
            text.parse::<u64>().ok().map(Value::from)
        }
        _ => None,
    }
}

/// The content of a JSON string written without escapes (`has_payload`'s md5, most context
/// strings, a tensor's dtype): what a parser would read, without one. `None` for any other text,
/// control characters included (a parser refuses them).
pub fn plain_string(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    inner.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\').then_some(inner)
}

/// [`parse`] of bytes that may not be UTF-8 (a payload).
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, Refused> {
    parse_from(serde_json::Deserializer::from_slice(bytes))
}

fn parse_from<'de, R: serde_json::de::Read<'de>>(mut de: serde_json::Deserializer<R>) -> Result<Value, Refused> {
    let value = Nested(0).deserialize(&mut de).map_err(|e| Refused::of(&e))?;
    de.end().map_err(|e| Refused::of(&e))?;
    Ok(value)
}

/// What a value nested too deep stops a parse with.
const TOO_DEEP: &str = "nested deeper than the bundle holds as JSON";

/// A value inside `.0` arrays and objects: builds a `Value` as serde_json does, with the depth
/// limit of the bundle (finding it in the same pass, rather than scanning the text first).
struct Nested(usize);

impl Nested {
    /// The depth of what a container holds, unless the container itself is too deep.
    fn inside<E: de::Error>(&self) -> Result<Nested, E> {
        if self.0 >= MAX_DEPTH { Err(E::custom(TOO_DEEP)) } else { Ok(Nested(self.0 + 1)) }
    }
}

impl<'de> DeserializeSeed<'de> for Nested {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Nested {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inside = self.inside()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(Nested(inside.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inside = self.inside()?;
        let mut members = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            members.insert(key, map.next_value_seed(Nested(inside.0))?);
        }
        Ok(Value::Object(members))
    }
}

/// Checks that well-formed JSON text can be held as JSON whole (which parsing it as a raw value
/// did not check): the nesting depth and the range of numbers. Builds nothing and decodes no
/// string (strings are skipped to their closing quote), so it costs a fraction of a parse.
pub fn check(text: &[u8]) -> Result<(), Refused> {
    let (mut depth, mut i) = (0usize, 0);
    while i < text.len() {
        match text[i] {
            b'"' => {
                i = string_end(text, i + 1);
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(Refused::TooDeep);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'-' | b'0'..=b'9' => {
                let len = text[i..].iter().take_while(|&&b| b.is_ascii_digit() || b"-+.eE".contains(&b)).count();
                if beyond_a_float(&text[i..i + len]) {
                    return Err(Refused::NumberOutOfRange);
                }
                i += len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The members of a JSON object, split without decoding anything: each key (`None` for the
/// whole object when a key holds an escape) and each value's raw text, in order, duplicates kept.
/// For text already known to be well-formed JSON (a raw value the parser checked): it is not
/// validated again, and `None` is all that text of another shape gets. serde_json's own split
/// validates every string escape by escape, which on torch's metrics (a 28 KB config string of
/// escaped quotes) took longer than building the values a table reads.
pub fn object_members(text: &str) -> Option<Vec<(&str, &str)>> {
    let bytes = text.as_bytes();
    let mut i = skip_space(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    i = skip_space(bytes, i + 1);
    if bytes.get(i) == Some(&b'}') {
        return (skip_space(bytes, i + 1) == bytes.len()).then_some(members);
    }
    loop {
        if bytes.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, i + 1);
        let key = text.get(i + 1..key_end.checked_sub(1)?)?;
        if key.contains('\\') {
            return None;
        }
        i = skip_space(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_space(bytes, i + 1);
        let end = value_end(bytes, start)?;
        members.push((key, text.get(start..end)?));
        i = skip_space(bytes, end);
        match bytes.get(i) {
            Some(b',') => i = skip_space(bytes, i + 1),
            Some(b'}') => return (skip_space(bytes, i + 1) == bytes.len()).then_some(members),
            _ => return None,
        }
    }
}

/// Past JSON's whitespace (what serde_json skips: space, tab, line feed, carriage return).
pub(super) fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Where the value starting at `i` of well-formed JSON text ends.
fn value_end(text: &[u8], mut i: usize) -> Option<usize> {
    match *text.get(i)? {
        b'"' => Some(string_end(text, i + 1)),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < text.len() {
                match text[i] {
                    b'"' => {
                        i = string_end(text, i + 1);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = text[i..].iter().take_while(|&&b| !b",}] \t\n\r".contains(&b)).count();
            (len > 0).then_some(i + len)
        }
    }
}

/// Whether a JSON number is beyond a 64-bit float, as serde_json reads it. Only one with an
/// exponent or hundreds of digits can be: those (few) are parsed to be sure.
pub(super) fn beyond_a_float(number: &[u8]) -> bool {
    let may_be = number.len() > 300 || number.iter().any(|&b| b == b'e' || b == b'E');
    may_be && serde_json::from_slice::<f64>(number).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::entry::Fields;
    use proptest::prelude::*;

    fn escaped(text: &str) -> String {
        escape_lone_surrogates_str(text).into_owned()
    }

    #[test]
    fn lone_surrogates_are_kept_as_text_and_pairs_are_left_alone() {
        // What Python's json.dumps writes for the file name b"caf\xe9.py" (surrogateescape).
        assert_eq!(escaped(r#"{"f": "caf\udce9.py"}"#), r#"{"f": "caf\\udce9.py"}"#);
        let v: serde_json::Value = serde_json::from_str(&escaped(r#"{"f": "caf\udce9.py"}"#)).unwrap();
        assert_eq!(v["f"], "caf\\udce9.py");
        // A lone high surrogate, upper case, at the end of a string and of the text.
        assert_eq!(escaped(r#""\uD83D""#), r#""\\uD83D""#);
        assert_eq!(escaped(r"\uD83D"), r"\\uD83D");
        // A high one followed by something that is not a low one.
        assert_eq!(escaped(r#""\ud83d\u0041""#), r#""\\ud83d\u0041""#);
        assert_eq!(escaped(r#""\ud83d\ud83d\ude00""#), r#""\\ud83d\ud83d\ude00""#);
        // A low one first, then a valid pair.
        assert_eq!(escaped(r#""\ude00\ud83d\ude00""#), r#""\\ude00\ud83d\ude00""#);
        // Valid pairs (either case), other escapes and already escaped text stay as they are.
        for kept in [
            r#""\ud83d\ude00""#,
            r#""\uD83D\uDE00""#,
            r#""\u00e9\n\"\\""#,
            r#""\\udce9""#,
            r#""\\\\udce9""#,
            r#""\udc""#,
            r#""plain""#,
        ] {
            assert_eq!(escaped(kept), kept);
            assert!(matches!(escape_lone_surrogates_str(kept), Cow::Borrowed(_)));
        }
        // An escaped backslash before an escape: `\\\udce9` is `\` then a lone surrogate.
        assert_eq!(escaped(r#""\\\udce9""#), r#""\\\\udce9""#);
    }

    proptest! {
        /// Whatever strings a log holds, escaped text parses, valid text is unchanged, and each
        /// lone surrogate becomes its six characters.
        #[test]
        fn escaped_text_always_parses(parts in proptest::collection::vec(
            prop_oneof![
                Just(r"\udce9".to_string()),
                Just(r"\uD800".to_string()),
                Just(r"\ud83d\ude00".to_string()),
                Just(r"\\".to_string()),
                Just(r"\\u".to_string()),
                Just("u".to_string()),
                "[a-z\u{e9}]{0,3}",
            ],
            0..8,
        )) {
            let json = format!("\"{}\"", parts.concat());
            let text = escape_lone_surrogates_str(&json);
            let parsed: String = serde_json::from_str(&text).unwrap();
            if serde_json::from_str::<String>(&json).is_ok() {
                prop_assert_eq!(&*text, &json);
            }
            // `\uD800` right before `\udce9` is a valid pair, not two lone ones.
            let paired = json.matches(r"\uD800\udce9").count();
            let lone = parts.iter().filter(|p| p.as_str() == r"\udce9" || p.as_str() == r"\uD800").count() - 2 * paired;
            prop_assert_eq!(parsed.matches(r"\udce9").count() + parsed.matches(r"\uD800").count(), lone);
        }
    }

    proptest! {
        /// The check refuses a number exactly when serde_json does, whatever its digits.
        #[test]
        fn numbers_are_refused_as_serde_json_refuses_them(
            number in "-?[1-9][0-9]{0,400}(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,4})?"
        ) {
            let refused = serde_json::from_str::<Value>(&number).is_err();
            prop_assert_eq!(check(number.as_bytes()) == Err(Refused::NumberOutOfRange), refused);
        }
    }

    /// Any JSON value, a few levels deep.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |x| x.is_finite()).prop_map(Value::from),
            ".{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::vec(("[a-c]{1,2}", inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// `object_members` splits an object as serde_json does (keys with escapes left to it),
        /// compact or pretty, and splits nothing else.
        #[test]
        fn members_split_as_serde_json_splits_them(
            members in proptest::collection::vec(("[a-c\"\\\\é]{0,3}", json_value()), 0..5),
            scalar in json_value(),
            pretty in any::<bool>(),
        ) {
            let to_text = |v: &Value| if pretty { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) };
            // Keys repeat as logged: joined by hand, as a map would keep one of each.
            let body: Vec<String> = members
                .iter()
                .map(|(k, v)| {
                    let (k, v) = (serde_json::to_string(k).unwrap(), to_text(v).unwrap());
                    if pretty { format!("{k} :\t{v} ") } else { format!("{k}:{v}") }
                })
                .collect();
            let text = if pretty { format!(" {{\n  {}\r\n}} ", body.join(",\n  ")) } else { format!("{{{}}}", body.join(",")) };
            let Fields(theirs) = serde_json::from_str(&text).unwrap();
            let theirs: Vec<(String, &str)> = theirs.into_iter().map(|(k, v)| (k.into_owned(), v.get())).collect();
            let escaped = members.iter().any(|(k, _)| serde_json::to_string(k).unwrap().contains('\\'));
            match object_members(&text) {
                Some(ours) => {
                    let ours: Vec<(String, &str)> = ours.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                    prop_assert_eq!(ours, theirs);
                }
                None => prop_assert!(escaped, "refused {}", text),
            }
            if !scalar.is_object() {
                let other = to_text(&scalar).unwrap();
                prop_assert_eq!(object_members(&other), None);
            }
        }

        /// Text of another shape gets `None` or members, never a panic: cut short anywhere.
        #[test]
        fn members_of_any_text_split_without_panic(value in json_value(), cut in any::<prop::sample::Index>()) {
            let text = serde_json::to_string(&value).unwrap();
            let end = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).nth(cut.index(text.len() + 1)).unwrap_or(text.len());
            let _ = object_members(&text[..end]);
        }
    }

    proptest! {
        /// Scalars, spelled any way (escapes, control characters, leading zeros, signs,
        /// exponents, spaces), parse as serde_json parses them, or are refused when it refuses.
        #[test]
        fn scalars_parse_as_serde_json_parses_them(
            text in prop_oneof![
                "[-+ 0-9.eE]{1,22}",
                "\"[a-z\\\\\"\t\n\u{1}é ]{0,6}\"",
                "(null|true|false|nul|truee| null|\"x\"\"|\"x)",
            ],
        ) {
            let ours = parse(&text).ok();
            let serde = serde_json::from_str::<Value>(&text).ok().filter(|v| !v.is_f64() || v.as_f64().is_some_and(f64::is_finite));
            prop_assert_eq!(ours, serde);
        }
    }

    proptest! {
        /// Within the depth limit, `parse` builds the value serde_json builds.
        #[test]
        fn parse_builds_what_serde_json_builds(value in json_value()) {
            let text = serde_json::to_string_pretty(&value).unwrap();
            prop_assert_eq!(parse(&text), Ok(serde_json::from_str::<Value>(&text).unwrap()));
            prop_assert_eq!(parse_bytes(text.as_bytes()), parse(&text));
        }
    }

    proptest! {
        /// `check` accepts what `parse` accepts, and refuses the rest for the same reason:
        /// metadata kept raw once checked is parsed by the tables that read it, and the index
        /// row and the tables must agree on what the log said.
        #[test]
        fn check_and_parse_accept_the_same_text(
            value in json_value(),
            number in "-?[1-9][0-9]{0,400}([eE][+-]?[0-9]{1,4})?",
            depth in (MAX_DEPTH - 2)..(MAX_DEPTH + 2),
        ) {
            let inner = format!(r#"{{"v": {}, "n": {number}}}"#, serde_json::to_string(&value).unwrap());
            for text in [inner.clone(), format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))] {
                prop_assert_eq!(check(text.as_bytes()).err(), parse(&text).err(), "{}", text);
            }
        }
    }

    #[test]
    fn depth_is_checked_below_serde_jsons_limit() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        // serde_json reads 127 levels: a value of the log at MAX_DEPTH fits with room to spare
        // in any file that holds it.
        assert!(serde_json::from_str::<Value>(&nested(127)).is_ok());
        assert_eq!(Refused::of(&serde_json::from_str::<Value>(&nested(128)).unwrap_err()), Refused::TooDeep);
        assert_eq!(check(nested(MAX_DEPTH).as_bytes()), Ok(()));
        assert_eq!(check(nested(MAX_DEPTH + 1).as_bytes()), Err(Refused::TooDeep));
        assert_eq!(parse(&nested(MAX_DEPTH)), serde_json::from_str(&nested(MAX_DEPTH)).map_err(|_| Refused::TooDeep));
        assert_eq!(parse_bytes(nested(MAX_DEPTH + 1).as_bytes()), Err(Refused::TooDeep));
        // Objects count as arrays do; brackets inside strings (escaped quotes too) do not.
        let objects = format!("{}1{}", r#"{"a":"#.repeat(MAX_DEPTH + 1), "}".repeat(MAX_DEPTH + 1));
        assert_eq!(check(objects.as_bytes()), Err(Refused::TooDeep));
        let in_string = format!("[\"\\\"{}\"]", "[".repeat(500));
        assert_eq!(check(in_string.as_bytes()), Ok(()));
        assert!(parse(&in_string).is_ok());
    }

    #[test]
    fn members_that_cannot_be_held_as_json_become_their_text() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let text = format!(r#"{{"name": "x", "deep": {deep}, "big": 1e400, "n": [1]}}"#);
        assert_eq!(shallow_value(&text), serde_json::json!({"name": "x", "deep": deep, "big": "1e400", "n": [1]}));
        assert_eq!(shallow_value("[1, 2]"), Value::Null);
    }

    #[test]
    fn numbers_beyond_a_float_are_found() {
        assert_eq!(check(br#"{"a": [1e308, -1.7976931348623157e308, 1e-400, 18446744073709551615]}"#), Ok(()));
        assert_eq!(check(br#"{"a": 1e400}"#), Err(Refused::NumberOutOfRange));
        assert_eq!(check(br#"{"a": [0, -2E+400]}"#), Err(Refused::NumberOutOfRange));
        assert_eq!(check(format!("[{}]", "9".repeat(400)).as_bytes()), Err(Refused::NumberOutOfRange));
        // Numbers in strings and keys are text.
        assert_eq!(check(br#"{"1e400": "1e400 \" 1e400"}"#), Ok(()));
        // serde_json refuses exactly what the check finds.
        for n in ["1e308", "1.8e308", "1.7976931348623157e308", "-1e309", "4.9e-324", "1e-400"] {
            let refused = serde_json::from_str::<Value>(n).is_err();
            assert_eq!(check(n.as_bytes()) == Err(Refused::NumberOutOfRange), refused, "{n}");
        }
        // A raw value skips all three problems: what makes this check necessary.
        let raw: Box<serde_json::value::RawValue> = serde_json::from_str(r#"[1e400, "\udce9"]"#).unwrap();
        assert_eq!(check(raw.get().as_bytes()), Err(Refused::NumberOutOfRange));
    }

    #[test]
    fn usable_numbers_are_finite_and_exact() {
        assert_eq!(usable_number(1_733_527_213_928_251.2), Some(1_733_527_213_928_251.2));
        assert_eq!(usable_number(-MAX_EXACT), Some(-MAX_EXACT));
        for bad in [1e308, -1e308, MAX_EXACT * 2.0, f64::INFINITY, f64::NAN] {
            assert_eq!(usable_number(bad), None, "{bad}");
        }
    }
}
