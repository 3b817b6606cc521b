//! Cache outcomes per compile: every FX graph cache / AOTAutograd cache / other cache lookup with
//! the reason and details from its payload, a verdict per cache and compile, and stream totals.

use std::collections::BTreeMap;

use indexmap::IndexSet;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::compiles::{cache_outcome, normalize};
use super::{Diagnostics, Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::parse::display_compile_id;
use crate::schema::CompileId;
use crate::schema::tables::{
    CacheLookup, CacheLookupSource, CacheResult, CacheSummary, CacheVerdict, CacheVerdictKind,
};
use crate::store::PerCompile;
use crate::store::index_in;
use crate::store::{RowList, Rows, Store};

/// Payload fields that have their own column (or are the attribution), not repeated in `details`.
const PROMOTED: [&str; 9] = [
    "key",
    "cache_status_detailed",
    "cache_bypass_reason",
    "reason",
    "_reason",
    "time_saved_ms",
    "time_saved_ns",
    "time_taken_ns",
    "cache_status_guard_expr",
];

/// The cache and outcome an artifact stands for, if it is a lookup.
fn classify(name: &str, payload: impl FnOnce() -> Option<String>) -> Option<(String, CacheResult)> {
    if let Some((cache, outcome)) = cache_outcome(name) {
        let outcome = match outcome {
            "hit" => CacheResult::Hit,
            "miss" => CacheResult::Miss,
            _ => CacheResult::Bypass,
        };
        return Some((cache, outcome));
    }
    let at = name.find("cache_")?;
    let cache = name[..at + "cache".len()].to_string();
    if name[at..].starts_with("cache_disabled") {
        return Some((cache, CacheResult::Disabled));
    }
    // Older torch logged e.g. `aotautograd_cache_hash` with the outcome only in `cache_state`.
    let outcome = match payload()?.as_str() {
        "hit" => CacheResult::Hit,
        "miss" => CacheResult::Miss,
        "bypass" => CacheResult::Bypass,
        _ => return None,
    };
    Some((cache, outcome))
}

/// Whether a `components` line starts a component: `[hash] name: value`.
fn is_component(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else { return false };
    // The hash's letters and digits, then `] ` (the first `] `, as no letter or digit is one):
    // one pass over the hash, on the thousands of short lines a cache payload lists.
    let bytes = rest.as_bytes();
    let hash = bytes.iter().take_while(|b| b.is_ascii_alphanumeric()).count();
    hash > 0 && bytes[hash..].starts_with(b"] ")
}

fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

fn str_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A lookup's details from its artifact payload.
fn lookup_from_payload(lookup: &mut CacheLookup, ev: &Event, diags: &mut Diagnostics) {
    match ev.payload_json() {
        Some(Value::Object(obj)) => {
            lookup.key = str_field(obj, "key");
            lookup.status = str_field(obj, "cache_status_detailed");
            lookup.reason = ["cache_bypass_reason", "reason", "_reason"].iter().find_map(|k| str_field(obj, k));
            let mut time = |key: &str| diags.json_number(ev, key, obj.get(key));
            lookup.time_saved_ms = time("time_saved_ms").or_else(|| time("time_saved_ns").map(|ns| ns / 1e6));
            lookup.time_taken_ms = time("time_taken_ns").map(|ns| ns / 1e6);
            lookup.guard_expr = str_field(obj, "cache_status_guard_expr");
            // Older torch split components into their lines; count only `[hash] name: ...` ones.
            if let Some(Value::Array(items)) = obj.get("components") {
                lookup.components = items.iter().filter_map(Value::as_str).filter(|s| is_component(s)).count() as u64;
            }
            lookup.details = obj
                .iter()
                .filter(|(k, v)| {
                    !PROMOTED.contains(&k.as_str())
                        && k.as_str() != "components"
                        && k.as_str() != "compile_id"
                        && matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
        }
        Some(Value::String(s)) => lookup.reason = first_line(s),
        Some(_) => {}
        None => lookup.reason = ev.payload_text().and_then(|t| first_line(&t)),
    }
}

#[derive(Default)]
pub struct CacheOutcomesTable {
    /// The lookups of entries filed under a compile, by its record (`Observe::record`); those
    /// long past in the spool.
    by_record: PerCompile<Vec<Lookup>>,
    /// The others, by the compile id their payload names (or none): few.
    by_id: HashMap<Option<CompileId>, Vec<Lookup>>,
    /// Cache names, interned: a long log looks a few caches up thousands of times.
    caches: IndexSet<Box<str>>,
    /// Every lookup's row, in log order.
    rows: Rows<CacheLookup>,
}

/// A lookup as the table keeps it: what finishing reads, and the index of its row (payload
/// details make a typed row several times larger).
#[derive(Serialize, Deserialize)]
struct Lookup {
    /// Index in `CacheOutcomesTable::caches`.
    cache: u32,
    outcome: CacheResult,
    source: CacheLookupSource,
    seq: u64,
    time_saved_ms: Option<f64>,
    /// Its row in `CacheOutcomesTable::rows`.
    row: u32,
}

impl Lookup {
    fn new(row: &CacheLookup, rows: &mut Rows<CacheLookup>, caches: &mut IndexSet<Box<str>>) -> Self {
        let at = rows.push(row);
        Lookup {
            cache: index_in(caches, row.cache.as_str()),
            outcome: row.outcome,
            source: row.source,
            seq: row.seq,
            time_saved_ms: row.time_saved_ms,
            row: at,
        }
    }
}

/// [`crate::schema::tables::CacheOutcomes`], its lookups passed through as their rows were pushed.
pub struct CacheOutcomesView {
    compiles: Vec<CompileCachesAt>,
    summary: Vec<CacheSummary>,
    rows: Rows<CacheLookup>,
}

/// [`crate::schema::tables::CompileCaches`], its lookups given by their rows.
struct CompileCachesAt {
    compile_id: Option<String>,
    caches: Vec<CacheVerdict>,
    lookups: Vec<u32>,
    metrics: BTreeMap<String, f64>,
}

/// [`crate::schema::tables::CompileCaches`] as serialized.
#[derive(Serialize)]
struct CompileCachesView<'a> {
    compile_id: &'a Option<String>,
    caches: &'a [CacheVerdict],
    lookups: RowList<'a>,
    metrics: &'a BTreeMap<String, f64>,
}

/// The compiles, each with its lookups read from the rows.
struct CompilesView<'a>(&'a CacheOutcomesView);

impl Serialize for CompilesView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let rows = t.rows.reader(4);
        serializer.collect_seq(t.compiles.iter().map(|c| CompileCachesView {
            compile_id: &c.compile_id,
            caches: &c.caches,
            lookups: rows.list(&c.lookups),
            metrics: &c.metrics,
        }))
    }
}

impl Serialize for CacheOutcomesView {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut table = serializer.serialize_struct("CacheOutcomes", 2)?;
        table.serialize_field("compiles", &CompilesView(self))?;
        table.serialize_field("summary", &self.summary)?;
        table.end()
    }
}

/// A compile's lookups while the table finishes.
struct CompileLookups {
    compile_id: Option<String>,
    lookups: Vec<Lookup>,
    metrics: BTreeMap<String, f64>,
}

impl CacheOutcomesTable {
    fn artifact(&mut self, ev: &Event, record: Option<u32>, diags: &mut Diagnostics) {
        let Some(name) = ev.name else { return };
        let Some((cache, outcome)) =
            classify(name, || ev.payload_json()?.get("cache_state")?.as_str().map(str::to_string))
        else {
            return;
        };
        let mut lookup = new_lookup(
            cache,
            outcome,
            name,
            CacheLookupSource::Artifact,
            ev.seq,
            ev.payload_ref.map(|p| p.hash.as_str()),
        );
        if ev.payload.is_some() {
            lookup_from_payload(&mut lookup, ev, diags);
        }
        let lookup = Lookup::new(&lookup, &mut self.rows, &mut self.caches);
        // Cache payloads name their compile (`0/1`) even when the envelope does not.
        self.file(ev, record, lookup, || {
            ev.payload_json()?.get("compile_id")?.as_str().and_then(super::trace_event::parse_compile_id)
        });
    }

    /// Files `lookup` under the entry's compile (`record`), else under the id `named` gives.
    fn file(&mut self, ev: &Event, record: Option<u32>, lookup: Lookup, named: impl FnOnce() -> Option<CompileId>) {
        match (ev.compile_id, record) {
            (Some(_), Some(record)) => self.by_record.entry(record).push(lookup),
            (id, _) => self.by_id.entry(id.map(normalize).or_else(named)).or_default().push(lookup),
        }
    }

    fn chromium_event(&mut self, ev: &Event, record: Option<u32>) {
        let Some(payload) = ev.payload else { return };
        // The event is parsed once for every table (compile_time reports the unreadable ones).
        let Some(te) = ev.trace_event() else { return };
        let (Some(name), Some("i" | "I" | "n")) = (te.name.as_deref(), te.ph.as_deref()) else { return };
        let Some(cache) = name.strip_suffix("_disabled").filter(|c| c.ends_with("_cache")) else { return };
        let lookup = new_lookup(
            cache.to_string(),
            CacheResult::Disabled,
            name,
            CacheLookupSource::ChromiumEvent,
            ev.seq,
            Some(payload.hash),
        );
        let lookup = Lookup::new(&lookup, &mut self.rows, &mut self.caches);
        self.file(ev, record, lookup, || super::trace_event::compile_id(te));
    }
}

/// A lookup with only what its entry says; payload details are filled in afterwards.
fn new_lookup(
    cache: String,
    outcome: CacheResult,
    name: &str,
    source: CacheLookupSource,
    seq: u64,
    blob: Option<&str>,
) -> CacheLookup {
    CacheLookup {
        cache,
        outcome,
        name: name.to_string(),
        source,
        seq,
        blob: blob.map(str::to_string),
        key: None,
        status: None,
        reason: None,
        time_saved_ms: None,
        time_taken_ms: None,
        guard_expr: None,
        components: 0,
        details: BTreeMap::new(),
    }
}

/// Counts per outcome: hit, miss, bypass, disabled (the order of `CacheResult`).
fn counts<'a>(lookups: impl Iterator<Item = &'a Lookup>) -> [u64; 4] {
    let mut n = [0; 4];
    for l in lookups {
        n[l.outcome as usize] += 1;
    }
    n
}

fn verdict(n: [u64; 4]) -> CacheVerdictKind {
    let kinds = [CacheVerdictKind::Hit, CacheVerdictKind::Miss, CacheVerdictKind::Bypass, CacheVerdictKind::Disabled];
    let present: Vec<usize> = (0..4).filter(|&i| n[i] > 0).collect();
    match present.as_slice() {
        [one] => kinds[*one],
        _ => CacheVerdictKind::Mixed,
    }
}

impl Table for CacheOutcomesTable {
    type Format = crate::schema::tables::CacheOutcomes;
    type Output<'a> = CacheOutcomesView;

    fn new(store: &Store) -> Self {
        CacheOutcomesTable {
            by_record: PerCompile::new(store),
            rows: Rows::new(store),
            ..CacheOutcomesTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        match ev.kind {
            "artifact" => self.artifact(ev, cx.record, diags),
            "chromium_event" => self.chromium_event(ev, cx.record),
            _ => {}
        }
    }

    fn finish(mut self, ctx: &Finish) -> Option<(CacheOutcomesView, u64)> {
        let row = |compile_id, lookups, metrics| CompileLookups { compile_id, lookups, metrics };
        let mut compiles = Vec::new();
        let mut filed = self.by_record.into_values().peekable();
        for (index, r) in ctx.compiles.records.iter().enumerate() {
            let mut lookups =
                filed.next_if(|(record, _)| *record as usize == index).map(|(_, l)| l).unwrap_or_default();
            if let Some(named) = self.by_id.remove(&Some(r.id())) {
                // In log order, as one list would have them.
                lookups.extend(named);
                lookups.sort_by_key(|l| l.seq);
            }
            let metrics = ctx.compiles.cache_metrics(&r);
            if !lookups.is_empty() || !metrics.is_empty() {
                compiles.push(row(Some(r.display()), lookups, metrics));
            }
        }
        // Ids known only from payloads, then lookups outside any compile.
        let mut rest: Vec<(Option<CompileId>, Vec<Lookup>)> = std::mem::take(&mut self.by_id).into_iter().collect();
        rest.sort_by_key(|(id, lookups)| (id.is_none(), lookups.first().map(|l| l.seq)));
        for (id, lookups) in rest {
            compiles.push(row(id.as_ref().map(display_compile_id), lookups, BTreeMap::new()));
        }
        if compiles.is_empty() {
            return None;
        }

        let mut summary: BTreeMap<String, CacheSummary> = BTreeMap::new();
        let mut finished = Vec::with_capacity(compiles.len());
        for mut c in compiles {
            // A disabled cache may be logged both as an artifact and as a trace event.
            let artifact_disabled: Vec<u32> = c
                .lookups
                .iter()
                .filter(|l| l.outcome == CacheResult::Disabled && l.source == CacheLookupSource::Artifact)
                .map(|l| l.cache)
                .collect();
            c.lookups.retain(|l| l.source == CacheLookupSource::Artifact || !artifact_disabled.contains(&l.cache));
            let mut caches: Vec<u32> = Vec::new();
            for l in &c.lookups {
                if !caches.contains(&l.cache) {
                    caches.push(l.cache);
                }
            }
            let mut verdicts = Vec::new();
            for id in caches {
                let of_cache = || c.lookups.iter().filter(move |l| l.cache == id);
                let cache: &str = &self.caches[id as usize];
                let n = counts(of_cache());
                let s = summary.entry(cache.to_string()).or_insert_with(|| CacheSummary {
                    cache: cache.to_string(),
                    hit: 0,
                    miss: 0,
                    bypass: 0,
                    disabled: 0,
                    compiles: 0,
                    time_saved_ms: 0.0,
                });
                s.hit += n[0];
                s.miss += n[1];
                s.bypass += n[2];
                s.disabled += n[3];
                s.compiles += 1;
                s.time_saved_ms +=
                    of_cache().filter(|l| l.outcome == CacheResult::Hit).filter_map(|l| l.time_saved_ms).sum::<f64>();
                verdicts.push(CacheVerdict {
                    cache: cache.to_string(),
                    outcome: verdict(n),
                    hit: n[0],
                    miss: n[1],
                    bypass: n[2],
                    disabled: n[3],
                });
            }
            finished.push(CompileCachesAt {
                compile_id: c.compile_id,
                caches: verdicts,
                lookups: c.lookups.into_iter().map(|l| l.row).collect(),
                metrics: c.metrics,
            });
        }
        let rows = finished.len() as u64;
        Some((
            CacheOutcomesView { compiles: finished, summary: summary.into_values().collect(), rows: self.rows },
            rows,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_are_classified_by_name_then_cache_state() {
        let none = || None;
        assert_eq!(classify("fx_graph_cache_hit", none), Some(("fx_graph_cache".into(), CacheResult::Hit)));
        assert_eq!(classify("aotautograd_cache_bypass", none), Some(("aotautograd_cache".into(), CacheResult::Bypass)));
        assert_eq!(classify("fx_graph_cache_disabled", none), Some(("fx_graph_cache".into(), CacheResult::Disabled)));
        assert_eq!(
            classify("aotautograd_cache_hash", || Some("miss".into())),
            Some(("aotautograd_cache".into(), CacheResult::Miss))
        );
        assert_eq!(classify("fx_graph_cache_hash", none), None);
        assert_eq!(classify("torch._functorch.config", || Some("hit".into())), None);
    }

    #[test]
    fn key_components_are_recognised_by_their_hash_prefix() {
        assert!(is_component("[ryphp53jheyimqwxz3d3u] example_inputs[0]: TensorMetadata(dtype=torch.float32)"));
        assert!(!is_component("def forward(self, arg0_1):"));
        assert!(!is_component("[] x: 1"));
        assert!(!is_component(""));
        assert!(!is_component("[ab]c] x: 1"));
        assert!(!is_component("[ab]"));
    }

    proptest::proptest! {
        /// The component test is the rule spelled out: the first `] ` ends a non-empty run of
        /// letters and digits after the opening `[`.
        #[test]
        fn a_component_is_a_hash_in_brackets_then_a_space(line in "\\[?[a9é\\]]{0,4}\\]? ?[\\[\\] a9:-]{0,6}") {
            let rule = line.strip_prefix('[').is_some_and(|rest| {
                let end = rest.find("] ");
                end.is_some_and(|end| end > 0 && rest[..end].bytes().all(|b| b.is_ascii_alphanumeric()))
            });
            proptest::prop_assert_eq!(is_component(&line), rule, "{:?}", line);
        }
    }

    #[test]
    fn verdict_is_mixed_only_when_outcomes_differ() {
        assert_eq!(verdict([2, 0, 0, 0]), CacheVerdictKind::Hit);
        assert_eq!(verdict([0, 0, 1, 0]), CacheVerdictKind::Bypass);
        assert_eq!(verdict([1, 1, 0, 0]), CacheVerdictKind::Mixed);
    }
}
