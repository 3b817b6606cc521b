//! Hash maps and sets for the per-entry work (parsing context, stream writers, analysis tables):
//! foldhash, randomly seeded like the standard library's SipHash but several times cheaper on
//! the short keys (compile ids, numbers, names) those maps are looked up by for every entry.
//! Nothing iterates them into a file (orders come from the input or from sorting), so the hasher
//! changes no output.

pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
