//! The search table: every distinct name and text a viewer's global search looks in (compiled
//! functions and files, artifact names, graph-break reasons, guards, failures, restarts), each
//! with the compiles it appears in. Guards are read from their entries here; the rest comes from
//! the shared compile records when the table finishes.

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::compile_directory::compiled_code;
use super::guards::{tree_guard_code, walk_tree};
use super::{Event, Finish, Observe, Table};
use crate::schema::tables::{Search, SearchKind};
use crate::store::{Distinct, Pairs, Store};

/// Terms as they are collected: each (kind, text) once, in order of first appearance, with the
/// compiles it appears in (sorted and deduplicated once, at the end). A large model's log has a
/// hundred thousand distinct guards: texts are held compressed, and the compiles of all terms in
/// one list.
#[derive(Default)]
pub struct SearchTable {
    /// The compile ids terms were seen in (as JSON strings), in order of first appearance, its
    /// index a compile's number in terms' lists: known by digest, like the texts, as a long log
    /// has tens of thousands.
    compiles: Distinct<String>,
    /// Each term's text, its index its id, known by its kind and text.
    texts: Distinct<String>,
    kinds: Vec<SearchKind>,
    /// The compile entries were seen in last, and the terms seen in it since.
    current: Option<u32>,
    current_terms: crate::fast_hash::HashSet<u32>,
    /// (term, compile), each time a term is seen in a compile that did not show it just before.
    seen: Pairs,
    /// The guard terms of each guard payload read lately, by blob id: a long log repeats the
    /// same guard tree for many compiles, and parsing it once is enough. Only a cache (a payload
    /// read again gives the same terms), emptied when full: a log whose every guard tree differs
    /// would keep the terms of each.
    guard_payloads: crate::fast_hash::HashMap<Box<str>, Box<[u32]>>,
}

/// Guard payloads whose terms [`SearchTable::guard_payloads`] holds at most.
const GUARD_PAYLOADS: usize = 1024;

impl SearchTable {
    /// The position of a compile id in `compiles`, adding it if new.
    fn compile(&mut self, display: &str) -> u32 {
        self.compiles.id_by(&[display.as_bytes()], || display.to_string())
    }

    /// Records that `text` (trimmed; nothing when empty) appears in `compile` (none: outside
    /// any compile); returns the term's index, if it has one.
    fn add(&mut self, kind: SearchKind, text: &str, compile: Option<u32>) -> Option<u32> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let before = self.texts.len();
        let term = self.texts.id_by(&[&[kind as u8], text.as_bytes()], || text.to_string());
        if self.texts.len() > before {
            self.kinds.push(kind);
        }
        self.add_compile(term, compile);
        Some(term)
    }

    /// Adds a compile to a term's list; entries of one compile come together, so most repeats
    /// are caught here (the rest at the end).
    fn add_compile(&mut self, term: u32, compile: Option<u32>) {
        let Some(at) = compile else { return };
        if self.current != Some(at) {
            self.current = Some(at);
            self.current_terms.clear();
        }
        if self.current_terms.insert(term) {
            self.seen.push((term, at));
        }
    }

    fn observe_guards(&mut self, ev: &Event) {
        let Some(payload) = ev.payload else { return };
        let compile = ev.display_id.map(|d| self.compile(d));
        if let Some(terms) = self.guard_payloads.get(payload.hash) {
            for t in terms.clone() {
                self.add_compile(t, compile);
            }
            return;
        }
        let mut terms = Vec::new();
        if ev.kind == "dynamo_cpp_guards_str" {
            let text = ev.payload_text().unwrap_or_default();
            walk_tree(&text, |_, _, body| terms.extend(self.add(SearchKind::Guard, tree_guard_code(body), compile)));
        } else {
            let list = ev.payload_json().and_then(Value::as_array);
            for code in list.into_iter().flatten().filter_map(|g| g.get("code")?.as_str()) {
                terms.extend(self.add(SearchKind::Guard, code, compile));
            }
        }
        if self.guard_payloads.len() >= GUARD_PAYLOADS {
            self.guard_payloads = Default::default();
        }
        self.guard_payloads.insert(payload.hash.into(), terms.into());
    }

    /// Terms of the compile records: compiled code, artifact names, graph-break reasons,
    /// failures and restart reasons.
    fn add_compiles(&mut self, ctx: &Finish) {
        let c = ctx.compiles;
        for r in c.records.iter() {
            let at = Some(self.compile(&r.display()));
            if let Some(code) = compiled_code(c, ctx.stacks, &r) {
                self.add(SearchKind::Function, &code.name, at);
                self.add(SearchKind::File, &code.filename, at);
            }
            for chunk in c.artifact_chunks(&r) {
                for a in chunk.iter() {
                    self.add(SearchKind::Artifact, c.name(a), at);
                }
            }
            for reason in r.graph_breaks() {
                self.add(SearchKind::GraphBreak, reason, at);
            }
            let Some(m) = c.metrics(&r) else { continue };
            if m.failed {
                let failure = match (m.fail_type.as_deref(), m.fail_reason.as_deref()) {
                    (Some(t), Some(reason)) => format!("{t}: {reason}"),
                    (t, reason) => t.or(reason).unwrap_or("failed").to_string(),
                };
                self.add(SearchKind::Failure, &failure, at);
            }
            for reason in &m.restart_reasons {
                self.add(SearchKind::Restart, reason, at);
            }
        }
        for a in &c.unattributed {
            self.add(SearchKind::Artifact, c.name(a), None);
        }
    }
}

impl Table for SearchTable {
    type Format = Search;
    type Output<'a> = SearchView;

    fn new(store: &Store) -> Self {
        SearchTable {
            compiles: Distinct::new(store),
            texts: Distinct::new(store),
            seen: Pairs::new(store),
            ..SearchTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, _cx: &mut Observe) {
        match ev.kind {
            // The guards table reports these entries when it cannot use them.
            "dynamo_cpp_guards_str" | "dynamo_guards" => self.observe_guards(ev),
            "guard_added_fast" | "guard_added" => {
                if let Some(expr) = ev.meta().get("expr").and_then(Value::as_str) {
                    let compile = ev.display_id.map(|d| self.compile(d));
                    self.add(SearchKind::Guard, expr, compile);
                }
            }
            _ => {}
        }
    }

    fn finish(mut self, ctx: &Finish) -> Option<(SearchView, u64)> {
        self.guard_payloads = Default::default();
        self.add_compiles(ctx);
        if self.texts.is_empty() {
            return None;
        }
        // Each term's compiles, sorted and deduplicated: `seen` grouped by term (counting sort).
        let terms = self.texts.len();
        let mut starts = vec![0u32; terms + 1];
        self.seen.for_each(|t, _| starts[t as usize + 1] += 1);
        for t in 0..terms {
            starts[t + 1] += starts[t];
        }
        let mut at: Vec<u32> = starts[..terms].to_vec();
        let mut compiles = vec![0u32; self.seen.len()];
        std::mem::take(&mut self.seen).for_each(|t, c| {
            compiles[at[t as usize] as usize] = c;
            at[t as usize] += 1;
        });
        let mut lists: Vec<Box<[u32]>> = Vec::with_capacity(terms);
        for t in 0..terms {
            let mut list = compiles[starts[t] as usize..starts[t + 1] as usize].to_vec();
            list.sort_unstable();
            list.dedup();
            lists.push(list.into());
        }
        drop(compiles);
        // Stable: each kind keeps its terms in order of first appearance.
        let mut order: Vec<u32> = (0..terms as u32).collect();
        order.sort_by_key(|&t| self.kinds[t as usize]);
        let view =
            SearchView { compiles: self.compiles, terms: Terms { texts: self.texts, kinds: self.kinds, lists, order } };
        Some((view, terms as u64))
    }
}

/// [`Search`], serialized from the collected terms.
#[derive(Serialize)]
pub struct SearchView {
    compiles: Distinct<String>,
    terms: Terms,
}

/// The terms, in order (`order`), each with its text read back from `texts`.
struct Terms {
    texts: Distinct<String>,
    kinds: Vec<SearchKind>,
    lists: Vec<Box<[u32]>>,
    order: Vec<u32>,
}

/// [`crate::schema::tables::SearchTerm`] as serialized, its text as held.
#[derive(Serialize)]
struct TermView<'a> {
    kind: SearchKind,
    text: &'a RawValue,
    compiles: &'a [u32],
}

impl Serialize for Terms {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let texts = self.texts.reader(2);
        let mut seq = serializer.serialize_seq(Some(self.order.len()))?;
        for &t in &self.order {
            let text = texts.get_raw(t);
            seq.serialize_element(&TermView {
                kind: self.kinds[t as usize],
                text: &text,
                compiles: &self.lists[t as usize],
            })?;
        }
        seq.end()
    }
}
