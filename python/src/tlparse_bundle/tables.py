"""Analysis tables as `Bundle.table` returns them: the table's JSON object as a read-only
mapping, with `rows` (its main list, as plain dicts) and `to_pandas`; and the parts a table is
stored in, checked to agree and merged (`Parts`). Which list is a table's main list is said once,
here, from docs/tables/*.md and docs/cross_rank/*.md."""

from __future__ import annotations

import importlib
import json
from typing import Any, Dict, Iterator, List, Mapping, Optional

from .errors import BundleError, NotFoundError, suggest

# The list `Table.rows` gives, per stream table: the list the manifest's `rows` counts, or, for
# the tables of ROWS_COUNTED_OTHERWISE, the list a viewer shows first.
STREAM_TABLES: Dict[str, str] = {
    "compile_directory": "compiles",
    "stack_trie": "nodes",
    "failures": "failures",
    "compilation_metrics": "metrics",
    "guards": "compiles",
    "inputs": "inputs",
    "recompiles": "frames",
    "graph_breaks": "breaks",
    "graph_sizes": "compiles",
    "cache_outcomes": "compiles",
    "compile_time": "compiles",
    "log_volume": "by_kind",
    "export_report": "failures",
    "provenance": "compiles",
    "runnables": "files",
    "collectives": "compiles",
    "runtime_estimates": "graphs",
    "graph_execution": "recordings",
    "search": "terms",
    "compile_summary": "slowest_compiles",
    "hints": "hints",
}

# The same for the cross-rank tables (`tables/cross_rank/`, bundles of two streams or more).
CROSS_RANK_TABLES: Dict[str, str] = {
    "compile_alignment": "compiles",
    "cache_divergence": "compiles",
    "compile_time_imbalance": "compiles",
    "rank_differ": "artifacts",
    "collective_schedules": "compiles",
    "execution_order": "streams",
    "runtime_estimations": "graphs",
    "tensor_meta": "graphs",
    "rank_findings": "streams",
}

# Tables whose manifest `rows` is not the length of their main list, and what it counts instead.
ROWS_COUNTED_OTHERWISE: Dict[str, str] = {
    "guards": "the items of dynamo_guards, guard_trees, shape_guards, specializations, symbols "
    "and data_dependent (rows holds compiles, one summary per compile id)",
    "stack_trie": "the nodes of both tries, nodes and unknown_nodes",
    "graph_execution": "executions: the items of every recording's order, plus legacy",
    "execution_order": "the streams that have an order, recorded or legacy",
}


def main_list(name: str, data: Mapping[str, Any]) -> str:
    """The key of a table's main list. A table this reader does not know (from a newer format)
    has one if its JSON has exactly one list."""
    known = STREAM_TABLES.get(name) or CROSS_RANK_TABLES.get(name)
    if known is not None:
        return known
    lists = [k for k, v in data.items() if isinstance(v, list)]
    if len(lists) == 1:
        return lists[0]
    raise BundleError(
        f"table {name} is unknown to this reader and has {len(lists)} lists ({', '.join(lists)}): "
        "index the table by key, or pass to_pandas(key=...)"
    )


class Parts:
    """The parts of one table, checked one at a time as they are read: every part is a JSON
    object with the members of part 0, its lists where part 0 has lists (slices of the table's
    lists) and every other member equal to part 0's (docs/format.md)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._first: Optional[Dict[str, Any]] = None  # part 0's members that are not lists
        self._lists: List[str] = []  # part 0's members that are lists

    def check(self, data: Any, path: str, index: int) -> Dict[str, Any]:
        """`data`, part `index` of the table read from `path`, if it agrees with part 0."""
        where = f"{path}: part {index} of table {self.name}"
        if not isinstance(data, dict):
            raise BundleError(f"{where} is not a JSON object (a table is a JSON object)")
        if self._first is None:
            self._lists = [k for k, v in data.items() if isinstance(v, list)]
            self._first = {k: v for k, v in data.items() if not isinstance(v, list)}
            return data
        members = set(self._first) | set(self._lists)
        if set(data) != members:
            missing, extra = sorted(members - set(data)), sorted(set(data) - members)
            raise BundleError(f"{where} has other members than part 0 (missing {missing}, extra {extra})")
        for key in self._lists:
            if not isinstance(data[key], list):
                raise BundleError(f"{where}: {key!r} is a list in part 0 and not in this part")
        for key, value in self._first.items():
            if not _same_json(data[key], value):
                # Counts and summaries are of the whole table: parts that disagree are not one table.
                raise BundleError(
                    f"{where}: {key!r} differs from part 0's (a member that is not a list is the same in every part)"
                )
        return data

    def extend(self, merged: Dict[str, Any], part: Dict[str, Any]) -> None:
        """Appends the lists of a later part (checked) to those of `merged`, part 0's document."""
        for key in self._lists:
            merged[key].extend(part[key])


def _same_json(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are the same JSON: Python's `==` takes `1`, `1.0` and
    `true` for one value."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class Table(Mapping[str, Any]):
    """One analysis table: a read-only mapping of its JSON object (`table["unattributed"]`),
    with `name`, `stream` (None for a cross-rank table), `manifest_rows` (the manifest's count,
    of the whole table), `part` (None for a whole table, else the index of the part it is), `rows`
    and `to_pandas()`."""

    def __init__(
        self, name: str, stream: Optional[str], data: Dict[str, Any], manifest_rows: object, part: Optional[int] = None
    ) -> None:
        self.name = name
        self.stream = stream
        self.manifest_rows = manifest_rows
        self.part = part
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        where = f"stream {self.stream}" if self.stream is not None else "cross-rank"
        if self.part is not None:
            where += f", part {self.part}"
        return f"<Table {self.name} ({where}): keys {', '.join(self._data)}>"

    @property
    def rows(self) -> List[Any]:
        """The table's main list (see STREAM_TABLES and CROSS_RANK_TABLES), its rows as dicts."""
        return self._list(main_list(self.name, self._data))

    def _list(self, key: str) -> List[Any]:
        if key not in self._data:
            raise NotFoundError(f"table {self.name} has no {key!r}: {suggest(key, self._data)}")
        value = self._data[key]
        if not isinstance(value, list):
            raise BundleError(f"table {self.name}: {key!r} is not a list")
        return value

    def to_pandas(self, key: Optional[str] = None) -> Any:
        """A pandas DataFrame of the main list, or of the list named `key` (one row per item;
        nested objects stay Python objects in their cell). Needs pandas."""
        try:
            pandas = importlib.import_module("pandas")
        except ImportError as e:
            raise ImportError(
                "Table.to_pandas() needs pandas, which is not installed: "
                "pip install pandas (or pip install 'tlparse-bundle[pandas]')"
            ) from e
        rows = self.rows if key is None else self._list(key)
        return pandas.DataFrame(rows)
