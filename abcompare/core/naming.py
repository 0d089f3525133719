"""Names a user gives (treatments, retrievers, splits, the comparison, the experiment, tag keys): one rule for
what a name may be, and one mapping to the form MLflow keys and file names use.

A treatment's name becomes a metric-key prefix (``dbsf.ndcg_at_10.delta``), a tag key, a plot file name and
a folder under the run's temporary folder. So a name must never be a path (``..``, ``a/b``), never hide
control characters, and two names must never meet after ``mlflow_safe_name`` (``a b`` and ``a_b`` would
overwrite each other's metrics). Config validation checks every name with :func:`name_problem` and
:func:`first_collision`; the MLflow logging uses :func:`mlflow_safe_name`. Nothing else invents a rule.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable

from abcompare.core.limits import MAX_LABEL_LENGTH, MAX_NAME_LENGTH, MAX_TAG_KEY_LENGTH

__all__ = [
    "MAX_LABEL_LENGTH",
    "MAX_NAME_LENGTH",
    "first_collision",
    "label_problem",
    "mlflow_safe_name",
    "name_problem",
    "tag_key_problem",
]


_UNSAFE = re.compile(r"[^0-9A-Za-z_.\-]")  # ASCII, as abcompare's metric keys (``mlflow_key``) are
_MLFLOW_KEY = re.compile(r"^[/\w.\- :]*$")  # MLflow's own rule for metric, param and tag keys
_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}  # control, format, surrogate, unassigned, separators


def mlflow_safe_name(name: str) -> str:
    """``name`` as one MLflow key segment and one file name: every character other than an ASCII letter or
    digit, ``_``, ``-`` or ``.`` becomes ``_`` (``"a b" -> "a_b"``, ``"x/y" -> "x_y"``, ``"größe" ->
    "gr__e"``)."""
    return _UNSAFE.sub("_", name)


def _invisible(name: str) -> str | None:
    for char in name:
        if unicodedata.category(char) in _INVISIBLE:
            return f"U+{ord(char):04X}"
    return None


def label_problem(text: object, max_length: int = MAX_LABEL_LENGTH) -> str | None:
    """What is wrong with a free-text label (shown, stored, never a path), or None: empty, a control or
    invisible formatting character, or longer than ``max_length``."""
    if not isinstance(text, str) or not text.strip():
        return "is empty"
    hidden = _invisible(text)
    if hidden is not None:
        return f"contains the control or invisible character {hidden}"
    if len(text) > max_length:
        return f"is {len(text)} characters long (at most {max_length})"
    return None


def name_problem(name: object, max_length: int = MAX_NAME_LENGTH) -> str | None:
    """What is wrong with a name that becomes a key, a file name or a path component, or None.

    A name is non-empty, at most ``max_length`` characters, holds no control or invisible character, no
    path separator (``/`` or ``\\``), and is not made of dots only (``.``, ``..``).
    """
    problem = label_problem(name, max_length)
    if problem is not None:
        return problem
    assert isinstance(name, str)
    if "/" in name or "\\" in name:
        return "contains a path separator ('/' or '\\')"
    if set(name.strip()) <= {"."}:
        return "is made of dots only ('.' and '..' are folder names)"
    if name != name.strip():
        return "starts or ends with whitespace"
    return None


def tag_key_problem(key: object) -> str | None:
    """What is wrong with an MLflow tag key, or None (MLflow's own rule: letters, digits, ``_ - . : /`` and
    space; not a path that normalises to something else)."""
    if not isinstance(key, str) or not key:
        return "is empty"
    if len(key) > MAX_TAG_KEY_LENGTH:
        return f"is {len(key)} characters long (at most {MAX_TAG_KEY_LENGTH})"
    if not _MLFLOW_KEY.match(key):
        return "may only contain letters, digits, '_', '-', '.', ':', '/' and spaces"
    normal = posixpath.normpath(key)
    if normal != key or normal == "." or normal.startswith(("..", "/")):
        return "must not be a relative or absolute path ('.', '..', a leading or doubled '/')"
    return None


def first_collision(names: Iterable[str]) -> tuple[str, str] | None:
    """The first two distinct names whose MLflow-safe forms are equal ignoring case (they would share metric
    keys, or file names on a case-insensitive file system), or None."""
    seen: dict[str, str] = {}
    for name in names:
        key = mlflow_safe_name(name).casefold()
        if key in seen and seen[key] != name:
            return seen[key], name
        seen.setdefault(key, name)
    return None
