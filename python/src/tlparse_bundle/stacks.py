"""A stream's stack table (`stacks/<stream>.json`): frames and stacks, each stored once. Index
rows and tables refer to stacks by id (`row["stack"]`, `row["meta"][f]` for f in
`row["meta_stacks"]`, a table's `stack`/`user_stack`) and to frames by id (`stack_trie` nodes)."""

from __future__ import annotations

from typing import Any, Dict, List

from .errors import BundleError, NotFoundError, clip


class Stacks:
    """`frames[i]` is `{file, line, name, loc?}`; `stacks[j]` is a list of frame ids, outermost
    call first; `stack(j)` gives stack j as its frames."""

    def __init__(self, path: str, data: Any) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("frames"), list) or not isinstance(data.get("stacks"), list):
            raise BundleError(f"{path}: a stack table is an object with the lists frames and stacks")
        self.path = path
        self.frames: List[Dict[str, Any]] = data["frames"]
        self.stacks: List[List[int]] = data["stacks"]

    def __repr__(self) -> str:
        return f"<Stacks {self.path}: {len(self.frames)} frames, {len(self.stacks)} stacks>"

    def stack(self, stack_id: int) -> List[Dict[str, Any]]:
        """The frames of a stack, outermost call first."""
        if isinstance(stack_id, bool) or not isinstance(stack_id, int) or not 0 <= stack_id < len(self.stacks):
            raise NotFoundError(f"{self.path}: no stack {clip(stack_id, 40)} (it has {len(self.stacks)})")
        ids = self.stacks[stack_id]
        if not isinstance(ids, list):
            raise BundleError(f"{self.path}: stack {stack_id} is not a list")
        return [self._frame(stack_id, f) for f in ids]

    def _frame(self, stack_id: int, frame_id: object) -> Dict[str, Any]:
        if isinstance(frame_id, bool) or not isinstance(frame_id, int) or not 0 <= frame_id < len(self.frames):
            raise BundleError(f"{self.path}: stack {stack_id} names frame {clip(frame_id, 40)}, which does not exist")
        return self.frames[frame_id]
