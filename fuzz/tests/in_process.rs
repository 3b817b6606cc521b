//! The `parse` mode's harness: a panic in the code under test is caught with its message and
//! location, and a real log runs through the parser and the tables to the end. (A test binary of
//! its own: the panic hook it installs would hide other tests' failure messages.)

use tlparse_fuzz::in_process::{self, Outcome, catch};
use tlparse_fuzz::run::parse_violations;

#[test]
fn a_panic_is_caught_with_its_message_and_location() {
    in_process::install_panic_hook();
    let caught = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
    assert!(caught.starts_with("panicked at fuzz/tests/in_process.rs:"), "{caught}");
    assert!(caught.ends_with(":\nboom 7"), "{caught}");
    let found = parse_violations(Outcome::Panicked(caught));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].invariant, "panic");
    assert!(found[0].signature.ends_with(": boom N"), "{}", found[0].signature);
    assert_eq!(catch(|| 5), Ok(5));
}

#[test]
fn a_real_log_goes_through_the_parser_and_every_table() {
    let log = tlparse_fuzz::workspace_root().join("fixtures-repo/tlparse-tests/comp_metrics.log");
    let text = std::fs::read(log).unwrap();
    match in_process::run(&[(&text, None)]) {
        Outcome::Done { streams, entries } => assert_eq!((streams, entries), (1, 26)),
        other => panic!("{other:?}"),
    }
    assert!(parse_violations(in_process::run(&[(&text, Some(3))])).is_empty());
    // Two ranks: the cross-rank tables run too.
    match in_process::run(&[(&text, Some(0)), (&text, Some(1))]) {
        Outcome::Done { streams, entries } => assert_eq!((streams, entries), (2, 52)),
        other => panic!("{other:?}"),
    }
}
