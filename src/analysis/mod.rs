//! Analysis tables computed from parsed entries: one module per table, each pure (entries in,
//! rows and diagnostics out). The compiler's first version writes the event index, stack table,
//! blob store and diagnostics only; the tables (compile directory, stack trie, failures,
//! recompiles, guards, cache outcomes, cross-rank divergence, ...) land here next.
