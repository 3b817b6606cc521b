//! `mask_volatile` on the cases of tests/volatile_cases.json: the same file the viewer's mirror
//! (viewers/reference-html/viewer/volatile.js) is tested on, so the two rules cannot drift.

use serde::Deserialize;
use tlparse_build::analysis::cross_rank::volatile::mask_volatile;

#[derive(Deserialize)]
struct Cases {
    masked: Vec<(String, String)>,
    same: Vec<(String, String)>,
    different: Vec<(String, String)>,
    named: Vec<(String, String, String, bool)>,
}

fn masked(text: &str) -> String {
    String::from_utf8(mask_volatile("", text.as_bytes())).unwrap()
}

#[test]
fn the_shared_cases_hold() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/volatile_cases.json");
    let cases: Cases = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.masked.len() > 5 && cases.same.len() > 5 && cases.different.len() > 5);
    for (text, want) in &cases.masked {
        assert_eq!(&masked(text), want, "{text:?}");
    }
    for (a, b) in &cases.same {
        assert_eq!(masked(a), masked(b), "{a:?} and {b:?} should be the same once masked");
    }
    for (a, b) in &cases.different {
        assert_ne!(masked(a), masked(b), "{a:?} and {b:?} should still differ once masked");
    }
    for (name, a, b, same) in &cases.named {
        let (ma, mb) = (mask_volatile(name, a.as_bytes()), mask_volatile(name, b.as_bytes()));
        assert_eq!(ma == mb, *same, "{name}: {a:?} and {b:?}");
    }
}
