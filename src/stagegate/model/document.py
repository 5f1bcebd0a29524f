"""A YAML file read into plain data, with where each part of it starts: what the loader
(``load.yamlsrc``) makes and every reader of located data takes (the model keeps the
documents of the migration's files)."""

from __future__ import annotations

from typing import Any

from stagegate.errors import Loc

Path = tuple[str | int, ...]
"""Where a value is in a document: the keys and indexes from its top."""


class Document:
    """Plain data read from one YAML file, with where each part of it starts.

    ``spans`` holds, for each top-level value written in place as a plain scalar (not
    quoted, not through an alias), the byte offsets ``[start, end)`` of its text in
    the file: what ``flip`` rewrites byte-exactly. Anchors and tags before the
    value are outside its span."""

    __slots__ = ("_locs", "data", "file", "key_marks", "marks", "quoted", "spans")

    def __init__(
        self,
        file: str,
        data: Any = None,
        marks: dict[Path, tuple[int, int]] | None = None,
        key_marks: dict[Path, tuple[int, int]] | None = None,
        quoted: set[Path] | None = None,
        spans: dict[Path, tuple[int, int]] | None = None,
    ) -> None:
        self.file = file
        self.data = data
        self.marks = marks if marks is not None else {}
        self.key_marks = key_marks if key_marks is not None else {}
        self.quoted = quoted if quoted is not None else set()
        self.spans = spans if spans is not None else {}
        self._locs: dict[Path, Loc] = {}
        """``loc`` of each path asked (readers ask the same paths in every matrix row)."""

    def __repr__(self) -> str:
        return f"Document({self.file!r})"

    def loc(self, path: Path) -> Loc:
        """Where the value at ``path`` starts; the nearest enclosing value if unknown."""
        path = tuple(path)
        found = self._locs.get(path)
        if found is None:
            at = path
            while at not in self.marks and at:
                at = at[:-1]
            line, col = self.marks.get(at, (1, 1))
            found = self._locs[path] = Loc(self.file, line, col)
        return found

    def key_loc(self, path: Path) -> Loc:
        """Where the key of the mapping entry at ``path`` starts (the value if no key)."""
        mark = self.key_marks.get(tuple(path))
        return Loc(self.file, *mark) if mark else self.loc(path)

    def text_loc(self, path: Path, offset: int) -> Loc:
        """The column of character ``offset`` inside a one-line scalar (for expressions)."""
        base = self.loc(path)
        quote = 1 if tuple(path) in self.quoted else 0
        return base.shifted(quote + max(offset, 0))

    def stored(self) -> dict[str, Any]:
        """The document as JSON data (for the on-disk cache); ``restored`` reads it back."""
        return {
            "data": self.data,
            "marks": [[list(p), line, col] for p, (line, col) in self.marks.items()],
            "key_marks": [[list(p), line, col] for p, (line, col) in self.key_marks.items()],
            "quoted": [list(p) for p in self.quoted],
            "spans": [[list(p), start, end] for p, (start, end) in self.spans.items()],
        }

    @classmethod
    def restored(cls, file: str, stored: Any) -> Document:
        """A document from ``stored()`` data; KeyError, TypeError or ValueError if it is not."""
        return cls(
            file,
            stored["data"],
            {tuple(p): (line, col) for p, line, col in stored["marks"]},
            {tuple(p): (line, col) for p, line, col in stored["key_marks"]},
            {tuple(p) for p in stored["quoted"]},
            {tuple(p): (start, end) for p, start, end in stored["spans"]},
        )
