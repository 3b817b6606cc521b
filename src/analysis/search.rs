//! The search table: every distinct name and text a viewer's global search looks in (compiled
//! functions and files, artifact names, graph-break reasons, guards, failures, restarts), each
//! with the compiles it appears in. Guards are read from their entries here; the rest comes from
//! the shared compile records when the table finishes.

use std::collections::HashMap;

use indexmap::{IndexMap, IndexSet};
use serde_json::Value;

use super::compile_directory::compiled_code;
use super::guards::parse_tree;
use super::{Diagnostics, Event, Finish, Table};
use crate::schema::tables::{Search, SearchKind, SearchTerm};

/// Terms as they are collected: (kind, text) → positions in `compiles`, in order of first
/// appearance (sorted and deduplicated once, at the end).
#[derive(Default)]
pub struct SearchTable {
    compiles: IndexSet<String>,
    terms: IndexMap<(SearchKind, String), Vec<u32>>,
    /// The guard terms (indexes in `terms`) of each guard payload already read, by blob id: a
    /// long log repeats the same guard tree for many compiles, and parsing it once is enough.
    guard_payloads: HashMap<String, Vec<u32>>,
}

impl SearchTable {
    /// The position of a compile id in `compiles`, adding it if new.
    fn compile(&mut self, display: &str) -> u32 {
        match self.compiles.get_index_of(display) {
            Some(i) => i as u32,
            None => self.compiles.insert_full(display.to_string()).0 as u32,
        }
    }

    /// Records that `text` (trimmed; nothing when empty) appears in `compile` (none: outside
    /// any compile); returns the term's index, if it has one.
    fn add(&mut self, kind: SearchKind, text: &str, compile: Option<u32>) -> Option<usize> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let entry = self.terms.entry((kind, text.to_string()));
        let index = entry.index();
        Self::add_compile(entry.or_default(), compile);
        Some(index)
    }

    /// Adds a compile to a term's list; entries of one compile come together, so most repeats
    /// are caught here (the rest at the end).
    fn add_compile(compiles: &mut Vec<u32>, compile: Option<u32>) {
        if let Some(at) = compile
            && compiles.last() != Some(&at)
        {
            compiles.push(at);
        }
    }

    /// The guards of an entry's payload: C++ guard-tree checks or structured guards' code.
    fn payload_guards(ev: &Event) -> Vec<String> {
        if ev.kind == "dynamo_cpp_guards_str" {
            let text = ev.payload_text().unwrap_or_default();
            return parse_tree(&text).1.into_iter().map(|g| g.code).collect();
        }
        let list = ev.payload_json().and_then(Value::as_array);
        list.into_iter().flatten().filter_map(|g| g.get("code")?.as_str().map(str::to_string)).collect()
    }

    fn observe_guards(&mut self, ev: &Event) {
        let Some(payload) = ev.payload else { return };
        let compile = ev.display_id.map(|d| self.compile(d));
        if let Some(terms) = self.guard_payloads.get(payload.hash) {
            for &t in terms {
                Self::add_compile(&mut self.terms[t as usize], compile);
            }
            return;
        }
        let terms = Self::payload_guards(ev)
            .iter()
            .filter_map(|guard| self.add(SearchKind::Guard, guard, compile))
            .map(|t| t as u32)
            .collect();
        self.guard_payloads.insert(payload.hash.to_string(), terms);
    }

    /// Terms of the compile records: compiled code, artifact names, graph-break reasons,
    /// failures and restart reasons.
    fn add_compiles(&mut self, ctx: &Finish) {
        let c = ctx.compiles;
        for r in &c.records {
            let at = Some(self.compile(&r.display));
            if let Some(code) = compiled_code(c, ctx.stacks, r) {
                self.add(SearchKind::Function, &code.name, at);
                self.add(SearchKind::File, &code.filename, at);
            }
            for a in &r.artifacts {
                self.add(SearchKind::Artifact, c.name(a), at);
            }
            for reason in &r.graph_breaks {
                self.add(SearchKind::GraphBreak, reason, at);
            }
            let Some(m) = r.metrics.as_deref() else { continue };
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
    type Output<'a> = Search;

    fn observe(&mut self, ev: &Event, _diags: &mut Diagnostics) {
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

    fn finish(mut self, ctx: &Finish) -> Option<(Search, u64)> {
        self.guard_payloads = HashMap::new();
        self.add_compiles(ctx);
        if self.terms.is_empty() {
            return None;
        }
        let mut terms: Vec<SearchTerm> = self
            .terms
            .into_iter()
            .map(|((kind, text), mut compiles)| {
                compiles.sort_unstable();
                compiles.dedup();
                SearchTerm { kind, text, compiles }
            })
            .collect();
        // Stable: each kind keeps its terms in order of first appearance.
        terms.sort_by_key(|t| t.kind);
        let rows = terms.len() as u64;
        Some((Search { compiles: self.compiles.into_iter().collect(), terms }, rows))
    }
}
