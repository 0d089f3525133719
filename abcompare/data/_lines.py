"""Low-level, vectorised text reading shared by the data readers: bytes in, Arrow lines out.

A file becomes one Arrow string per physical line without a Python loop, so a 10M-line run loads in
seconds; every later check keeps the 1-based line number so errors point where an editor would.
"""

from __future__ import annotations

import gzip
import mmap
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.core.arrow_memory import prefer_system_pool
from abcompare.core.errors import DataError

prefer_system_pool()  # before the first large Arrow buffer (abcompare.core.arrow_memory says why)

__all__ = [
    "InputFile",
    "as_input",
    "content_lines",
    "file_bytes",
    "first_true",
    "parse_floats",
    "peek_bytes",
    "read_bytes",
    "read_text_lines",
    "regular_columns",
    "unix_newlines",
]


class InputFile(os.PathLike):
    """An input file named by the user, read from the disk at most once when it cannot be read twice.

    A regular file can be mapped, peeked at and read again. A named pipe (``<(zcat run.gz)``), a device or
    standard input gives its bytes once: they are kept here for every later look (format sniffing, the
    fast path, the line-locating path), so no reader ever opens it a second time. ``str()`` is the path,
    so errors name the file the user gave.
    """

    def __init__(self, path: str | Path, what: str) -> None:
        self.path = Path(path)
        self.what = what
        self._data: bytes | None = None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"InputFile({str(self.path)!r}, {self.what!r})"

    @property
    def rereadable(self) -> bool:
        """Whether the file can be opened again and give the same bytes (a regular file)."""
        return self.path.is_file()

    def read(self) -> bytes:
        """The raw bytes (gunzipped for ``.gz``, without a byte-order mark), read once for a pipe."""
        if self._data is not None:
            return self._data
        data = _read_path(self.path, self.what)
        if not self.rereadable:
            self._data = data
        return data


def as_input(path: str | Path | InputFile, what: str) -> InputFile:
    """``path`` as an ``InputFile`` (itself when it is one already)."""
    return path if isinstance(path, InputFile) else InputFile(path, what)


def read_bytes(path: str | Path | InputFile, what: str) -> bytes:
    """The raw bytes of ``path`` (gunzipped for ``.gz``); a missing file or folder is a ``DataError``."""
    return as_input(path, what).read()


def _read_path(p: Path, what: str) -> bytes:
    if not p.exists():
        raise DataError(
            f"{what} file not found",
            file=p,
            hint="check the path (relative paths start at the current directory)",
        )
    if p.is_dir():
        raise DataError(f"expected a {what} file, found a folder", file=p, hint="point at the file itself")
    try:
        data = p.read_bytes()
        if p.suffix == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DataError(
            f"cannot read {what} file: {exc}", file=p, hint="check permissions and that the file is complete"
        ) from exc
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark is not content
        data = data[3:]
    return data


@contextmanager
def file_bytes(path: str | Path | InputFile, what: str) -> Iterator[bytes | mmap.mmap]:
    """The file's content as ``read_bytes`` gives it, memory-mapped instead of copied when it can be (a
    plain, non-empty file without a byte-order mark); the mapping is closed on exit."""
    path = as_input(path, what)
    p = path.path
    mapped = None
    if p.suffix != ".gz" and p.is_file():
        try:
            with p.open("rb") as handle:
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file cannot be mapped; read_bytes says what is wrong
            mapped = None
        if mapped is not None and mapped[:3] == b"\xef\xbb\xbf":
            mapped.close()
            mapped = None
    if mapped is None:
        yield read_bytes(path, what)
        return
    try:
        yield mapped
    finally:
        with suppress(BufferError):  # a buffer still exported (an error's traceback): the collector closes it
            mapped.close()


def peek_bytes(path: str | Path | InputFile, what: str, size: int = 4096) -> bytes:
    """The first ``size`` bytes of the (gunzipped) file, for format sniffing; errors as ``read_bytes``. A
    file that cannot be read twice (a pipe) is read whole, once, and kept for the reader."""
    path = as_input(path, what)
    p = path.path
    if p.suffix == ".gz" or not path.rereadable:
        return path.read()[:size]
    try:
        with p.open("rb") as handle:
            head = handle.read(size)
    except OSError:
        return path.read()[:size]
    return head[3:] if head.startswith(b"\xef\xbb\xbf") else head


def unix_newlines(data: bytes | mmap.mmap) -> bytes | mmap.mmap:
    """``data`` with every line ending as ``\\n``: Windows ``\\r\\n`` and old Mac ``\\r`` read exactly like
    Unix ``\\n`` (a bare ``\\r`` is never a character inside a line). Unchanged, and not copied, when the
    file holds no ``\\r``."""
    if data.find(b"\r") == -1:
        return data
    return bytes(data).replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _bad_utf8_line(data: bytes) -> tuple[int, int]:
    """(1-based line, byte offset) of the first invalid UTF-8 sequence in ``data``."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1, exc.start
    return 0, -1  # pragma: no cover - only called when Arrow found invalid UTF-8


def read_text_lines(path: str | Path | InputFile, what: str) -> pa.Array:
    """Every line of a UTF-8 text file as an Arrow ``large_string`` array; ``\\n``, ``\\r\\n`` and a bare
    ``\\r`` all end a line (see ``unix_newlines``), so line numbers are the same whatever the convention."""
    data = unix_newlines(read_bytes(path, what))
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    blob = pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        text = blob.cast(pa.large_string())
    except pa.ArrowInvalid:
        line, offset = _bad_utf8_line(data)
        raise DataError(
            f"unreadable encoding: invalid UTF-8 at byte {offset}",
            file=path,
            line=line,
            hint="save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
        ) from None
    lines = pc.split_pattern(text, "\n").flatten()
    if len(lines) and len(data) and data.endswith(b"\n"):
        lines = lines.slice(0, len(lines) - 1)  # the empty piece after the final newline is not a line
    return lines


def content_lines(
    path: str | Path | InputFile, what: str, *, comments: bool = True, strip: bool = True
) -> tuple[pa.Array, np.ndarray]:
    """Non-blank lines and their 1-based line numbers; stripped of surrounding whitespace by default.

    With ``strip=False`` the line is kept as it is (tab-separated fields may be empty). With
    ``comments`` lines whose first non-blank character is ``#`` are skipped, as trec_eval does.
    """
    raw = read_text_lines(path, what)
    trimmed = pc.utf8_trim_whitespace(raw)
    keep = pc.not_equal(trimmed, "")
    if comments:
        keep = pc.and_(keep, pc.invert(pc.starts_with(trimmed, "#")))
    keep_np = keep.to_numpy(zero_copy_only=False)
    numbers = np.flatnonzero(keep_np) + 1
    lines = trimmed if strip else raw
    return lines.filter(keep), numbers


def first_true(mask: np.ndarray) -> int | None:
    """Index of the first True in a boolean array, or None."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$"


def parse_floats(
    values: pa.Array, *, path: str | Path, numbers: np.ndarray, what: str, hint: str, field: str | None = None
) -> np.ndarray:
    """Strings to float64, vectorised; the first non-numeric one is a ``DataError`` at its line."""
    try:
        return pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        ok = pc.match_substring_regex(values, _NUMBER, ignore_case=True).to_numpy(zero_copy_only=False)
        bad = first_true(~ok)
        if bad is None:  # pragma: no cover - the regex and Arrow's parser agree on ordinary numbers
            raise DataError(f"cannot parse the {what} values as numbers", file=path, hint=hint) from None
        raise DataError(
            f"non-numeric {what} {values[bad].as_py()!r}",
            file=path,
            line=int(numbers[bad]),
            field=field,
            hint=hint,
        ) from None


def check_trec_ids(frame: pd.DataFrame, what: str, hint: str) -> None:
    """TREC files are whitespace-separated: ``query_id`` and ``key`` must be non-empty and contain no
    whitespace, and a query id must not start with ``#`` (trec_eval would read the line as a comment)."""
    for column in ("query_id", "key"):
        pattern = r"\s|^$|^#" if column == "query_id" else r"\s|^$"
        arr = pa.array(frame[column].astype("str"), type=pa.large_string())
        mask = pc.fill_null(pc.match_substring_regex(arr, pattern), True).to_numpy(zero_copy_only=False)
        bad = first_true(mask)
        if bad is not None:
            raise DataError(
                f"{column} {frame[column].iloc[bad]!r} is empty, contains whitespace or (query ids) starts "
                f"with '#'; {what} cannot hold it",
                field=column,
                hint=hint,
            )


# ASCII whitespace that ``pc.ascii_split_whitespace`` splits on besides the space and the line endings; a
# file holding any of these takes the general path.
_OTHER_SPACE = (b"\t", b"\v", b"\f")


def regular_columns(
    data: bytes | mmap.mmap, names: Sequence[str], types: dict[str, pa.DataType]
) -> pa.Table | None:
    """The lines of ``data`` as a table of ``len(names)`` single-space-separated fields, parsed in one
    multithreaded ``pyarrow.csv`` pass; None when the text is not that regular (another whitespace
    character, a line with another number of fields, invalid UTF-8, a value of the wrong type), so the
    caller takes its general, line-locating path. Line endings are read as ``unix_newlines`` reads them
    (``\\r\\n`` and a bare ``\\r`` end a line: pyarrow's own rule), so the text is not copied to convert
    them. Blank lines are skipped; fields may still be empty (a doubled space) or carry Unicode whitespace:
    the caller checks what it needs."""
    import pyarrow.csv as pacsv

    if not len(data):
        return None
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(column_names=list(names), use_threads=True),
            parse_options=pacsv.ParseOptions(
                delimiter=" ",
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=True,
            ),  # fmt: skip
            convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=[], strings_can_be_null=False, check_utf8=True
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    # looked for after the parse, whose threads have brought the file's pages in: a scan is then cheap
    if any(data.find(byte) != -1 for byte in _OTHER_SPACE):
        return None
    return table
