//! Who is generating all the logs: entries and bytes by kind, by artifact name and by call site.

use super::{Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::schema::tables::{LogVolume, Volume, VolumeRow};

#[derive(Default)]
pub struct LogVolumeTable {
    total: Volume,
    by_kind: HashMap<String, Volume>,
    by_name: HashMap<(String, String), Volume>,
    by_source: HashMap<String, Volume>,
}

/// Extends the format's `Volume` row with what the table adds to it.
trait AddEvent {
    fn add(&mut self, ev: &Event);
}

impl AddEvent for Volume {
    fn add(&mut self, ev: &Event) {
        self.entries += 1;
        self.header_bytes += ev.header_bytes;
        self.log_bytes += ev.header_bytes + 1;
        if let Some(p) = ev.payload_ref {
            let bytes = p.size;
            self.payload_entries += 1;
            self.payload_bytes += bytes;
            self.payload_lines += p.lines;
            // In the file each line has a tab and a `\n`; the stored payload already holds the
            // `\n`s between lines: one `\n` more, plus one tab per line.
            if p.lines > 0 {
                self.log_bytes += bytes + p.lines + 1;
            }
        }
    }
}

/// A group's row.
fn row(key: String, kind: Option<String>, v: Volume) -> VolumeRow {
    VolumeRow {
        key,
        kind,
        entries: v.entries,
        payload_entries: v.payload_entries,
        header_bytes: v.header_bytes,
        payload_bytes: v.payload_bytes,
        payload_lines: v.payload_lines,
        log_bytes: v.log_bytes,
    }
}

/// Biggest first; ties by key, then kind.
fn sorted(mut rows: Vec<VolumeRow>) -> Vec<VolumeRow> {
    rows.sort_by(|a, b| {
        b.log_bytes.cmp(&a.log_bytes).then_with(|| a.key.cmp(&b.key)).then_with(|| a.kind.cmp(&b.kind))
    });
    rows
}

impl Table for LogVolumeTable {
    type Format = crate::schema::tables::LogVolume;
    type Output<'a> = LogVolume;

    fn observe(&mut self, ev: &Event, _cx: &mut Observe) {
        self.total.add(ev);
        match self.by_kind.get_mut(ev.kind) {
            Some(v) => v.add(ev),
            None => self.by_kind.entry(ev.kind.to_string()).or_default().add(ev),
        }
        if let Some(name) = ev.name {
            self.by_name.entry((ev.kind.to_string(), name.to_string())).or_default().add(ev);
        }
        match self.by_source.get_mut(ev.src) {
            Some(v) => v.add(ev),
            None => self.by_source.entry(ev.src.to_string()).or_default().add(ev),
        }
    }

    fn finish(self, _ctx: &Finish) -> Option<(LogVolume, u64)> {
        if self.total.entries == 0 {
            return None;
        }
        let by_kind = sorted(self.by_kind.into_iter().map(|(k, v)| row(k, None, v)).collect());
        let by_name = sorted(self.by_name.into_iter().map(|((kind, name), v)| row(name, Some(kind), v)).collect());
        let by_source = sorted(self.by_source.into_iter().map(|(k, v)| row(k, None, v)).collect());
        let rows = by_kind.len() as u64;
        Some((LogVolume { total: self.total, by_kind, by_name, by_source }, rows))
    }
}
