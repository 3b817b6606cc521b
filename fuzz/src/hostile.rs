//! Hostile values, and where they go in JSON text: the strings, numbers and objects of a header's
//! envelope or a JSON payload, found by a scan that tolerates damaged JSON (the text may already
//! have been mutated). Each value here is one a real log has held or a JSON writer can produce:
//! Python's `json.dumps` writes lone surrogates for non-UTF-8 paths, and `NaN` and `Infinity`.

use std::ops::Range;

use crate::rng::Rng;

/// The places in a JSON text where a value can be put.
#[derive(Debug, Default)]
pub struct JsonSites {
    /// Contents (between the quotes) of strings that are values, not keys.
    pub strings: Vec<Range<usize>>,
    /// Numbers, each with the key it is the value of (or the last key before it, in an array).
    pub numbers: Vec<(Range<usize>, Option<Range<usize>>)>,
    /// Positions just after an object's `{`.
    pub objects: Vec<usize>,
}

impl JsonSites {
    /// Scans `json` once.
    pub fn scan(json: &[u8]) -> JsonSites {
        let mut sites = JsonSites::default();
        let mut last_key = None;
        let mut previous = b' ';
        let mut i = 0;
        while i < json.len() {
            match json[i] {
                b'"' => {
                    let end = string_end(json, i + 1);
                    let after = json[end.min(json.len())..].iter().skip(1).find(|b| !b.is_ascii_whitespace());
                    if after == Some(&b':') {
                        last_key = Some(i + 1..end);
                    } else {
                        sites.strings.push(i + 1..end);
                    }
                    previous = b'"';
                    i = end + 1;
                    continue;
                }
                b'-' | b'0'..=b'9' if matches!(previous, b':' | b'[' | b',') => {
                    let len = json[i..].iter().take_while(|b| b"0123456789.eE+-".contains(b)).count();
                    sites.numbers.push((i..i + len, last_key.clone()));
                    previous = b'0';
                    i += len;
                    continue;
                }
                b'{' => sites.objects.push(i + 1),
                _ => {}
            }
            if !json[i].is_ascii_whitespace() {
                previous = json[i];
            }
            i += 1;
        }
        sites
    }
}

/// Where a string whose contents start at `start` ends (the closing quote, or the text's end).
fn string_end(json: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < json.len() {
        match json[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    json.len()
}

/// Escapes Python's `json.dumps` writes for strings that are not valid Unicode, and their kin.
pub const SURROGATES: &[&str] = &[
    r"\udce9",
    r"\ud800",
    r"\udfff",
    r"\ud83d",
    r"\ude00\ud83d",
    r"\udce9\udce9/x.py",
    r"\ud800\u0000",
    r"\u0000",
    r"\ud83d\ude00",
];

/// Numbers that break arithmetic, conversions and JSON readers.
pub const NUMBERS: &[&str] = &[
    "1e308",
    "-1e308",
    "1e999",
    "-1e999",
    "-0",
    "-0.0",
    "18446744073709551616",
    "-9223372036854775809",
    "9007199254740993",
    "4294967296",
    "0.1e-400",
    "1e-320",
    "1.7976931348623157e308",
    "-1",
    "123456789012345678901234567890123456789",
    "NaN",
    "Infinity",
    "-Infinity",
];

/// Keys whose numbers are times, durations, counts or ids: where an absurd value hurts most.
const SENSITIVE_KEYS: &[&str] =
    &["ts", "dur", "time", "_us", "_ns", "_s", "start", "end", "rank", "id", "attempt", "size", "line", "pid", "tid"];

/// Puts a hostile value into a string, a number or an object of `json`, chosen by `rng`;
/// always changes the text (with no site for it, the value is added as a new member or
/// appended).
pub fn inject(rng: &mut Rng, json: &[u8], value: &Hostile) -> Vec<u8> {
    let sites = JsonSites::scan(json);
    match value {
        Hostile::InString(text) => into_string(rng, json, &sites, text),
        Hostile::Number(text) => into_number(rng, json, &sites, text),
        Hostile::Value(text) => into_value(rng, json, &sites, text),
    }
}

/// A hostile piece of JSON and the kind of place it goes.
#[derive(Debug, Clone)]
pub enum Hostile {
    /// Text put inside a string (escapes included, quotes excluded).
    InString(String),
    /// A number token replacing a number.
    Number(String),
    /// A whole JSON value replacing a value.
    Value(String),
}

fn into_string(rng: &mut Rng, json: &[u8], sites: &JsonSites, text: &str) -> Vec<u8> {
    if sites.strings.is_empty() {
        return add_member(rng, json, sites, &format!("\"{text}\""));
    }
    let site = rng.pick(&sites.strings).clone();
    // Replace the whole string, or put the text before, inside or after what it holds.
    let (at, cut) = match rng.below(4) {
        0 => (site.start, site.end),
        1 => (site.start, site.start),
        2 => (site.end, site.end),
        _ => {
            let at = rng.between(site.start, site.end);
            // Never split an escape: move back to the start of a `\` run.
            let at = (site.start..=at).rev().find(|&i| i == site.start || json[i - 1] != b'\\').unwrap_or(at);
            (at, at)
        }
    };
    splice(json, at..cut, text.as_bytes())
}

fn into_number(rng: &mut Rng, json: &[u8], sites: &JsonSites, text: &str) -> Vec<u8> {
    let sensitive: Vec<&Range<usize>> = sites
        .numbers
        .iter()
        .filter(|(_, key)| {
            key.as_ref().is_some_and(|k| {
                let key = String::from_utf8_lossy(&json[k.clone()]);
                SENSITIVE_KEYS.iter().any(|s| key.contains(s))
            })
        })
        .map(|(range, _)| range)
        .collect();
    let site = if !sensitive.is_empty() && !rng.one_in(4) {
        (*rng.pick(&sensitive)).clone()
    } else if let Some((range, _)) = (!sites.numbers.is_empty()).then(|| rng.pick(&sites.numbers)) {
        range.clone()
    } else {
        let key = rng.pick(&["ts", "dur", "rank", "frame_id", "start_time_us"]);
        return add_member(rng, json, sites, &format!("\"{key}\": {text}"));
    };
    if json[site.clone()] == *text.as_bytes() {
        return splice(json, site.clone(), format!("{text}0").as_bytes());
    }
    splice(json, site, text.as_bytes())
}

fn into_value(rng: &mut Rng, json: &[u8], sites: &JsonSites, text: &str) -> Vec<u8> {
    // A value replaces a whole string (quotes included), a number, or joins an object.
    match rng.below(3) {
        0 if !sites.strings.is_empty() => {
            let site = rng.pick(&sites.strings).clone();
            splice(json, site.start - 1..(site.end + 1).min(json.len()), text.as_bytes())
        }
        1 if !sites.numbers.is_empty() => {
            let site = rng.pick(&sites.numbers).0.clone();
            splice(json, site, text.as_bytes())
        }
        _ => add_member(rng, json, sites, &format!("\"fuzz\": {text}")),
    }
}

/// Adds `"key": value` text as the first member of an object, or at the end of the text.
fn add_member(rng: &mut Rng, json: &[u8], sites: &JsonSites, member: &str) -> Vec<u8> {
    let Some(&at) = (!sites.objects.is_empty()).then(|| rng.pick(&sites.objects)) else {
        return [json, b" {", member.as_bytes(), b"}"].concat();
    };
    let empty = json[at..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}');
    let text = if empty { member.to_string() } else { format!("{member}, ") };
    splice(json, at..at, text.as_bytes())
}

fn splice(json: &[u8], range: Range<usize>, text: &[u8]) -> Vec<u8> {
    [&json[..range.start], text, &json[range.end..]].concat()
}

/// JSON nested `depth` levels deep: arrays, objects, or both.
pub fn deep_value(rng: &mut Rng, depth: usize) -> String {
    let (open, close) = match rng.below(3) {
        0 => ("[".to_string(), "]".to_string()),
        1 => ("{\"a\": ".to_string(), "}".to_string()),
        _ => ("[{\"k\": ".to_string(), "}]".to_string()),
    };
    let levels = if open.starts_with("[{") { depth.div_ceil(2) } else { depth };
    format!("{}1{}", open.repeat(levels), close.repeat(levels))
}

/// String contents of `len` bytes: plain, escaped, or non-ASCII.
pub fn long_string(rng: &mut Rng, len: usize) -> String {
    let unit = *rng.pick(&["a", "\\n", "\\u00e9", "é", "\\\\", "<script>", "\\udce9", " "]);
    unit.repeat(len / unit.len() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_tells_keys_from_values_and_finds_numbers() {
        let json = br#"{"str": ["a\"b", 3], "ts": -1.5e3, "x": {}}"#;
        let sites = JsonSites::scan(json);
        let strings: Vec<&[u8]> = sites.strings.iter().map(|r| &json[r.clone()]).collect();
        assert_eq!(strings, vec![br#"a\"b"#.as_slice()]);
        let numbers: Vec<(&[u8], &[u8])> =
            sites.numbers.iter().map(|(r, k)| (&json[r.clone()], &json[k.clone().unwrap()])).collect();
        assert_eq!(numbers, vec![(b"3".as_slice(), b"str".as_slice()), (b"-1.5e3", b"ts")]);
        assert_eq!(sites.objects.len(), 2);
    }

    #[test]
    fn injections_change_the_text_even_without_a_site() {
        let mut rng = Rng::new(3);
        for json in [&b"{}"[..], b"[]", b"", b"{\"a\": \"b\", \"n\": 1}"] {
            for value in [
                Hostile::InString(r"\udce9".into()),
                Hostile::Number("1e308".into()),
                Hostile::Value(deep_value(&mut rng, 200)),
            ] {
                for _ in 0..20 {
                    assert_ne!(inject(&mut rng, json, &value), json, "{value:?}");
                }
            }
        }
    }

    #[test]
    fn deep_values_are_as_deep_as_asked() {
        let mut rng = Rng::new(5);
        for _ in 0..10 {
            let v = deep_value(&mut rng, 300);
            let depth = v.bytes().take_while(|&b| b != b'1').filter(|&b| b == b'[' || b == b'{').count();
            assert!((300..=301).contains(&depth), "{depth}");
        }
    }
}
