"""Alignment diagnostics: do the annotated ids match the keys the hits compute?

The number-one pitfall: annotations written as ``doc-1`` while hits are keyed ``doc-1#chunk-0`` make
every relevant item a miss and recall silently zero. ``alignment_report`` measures the overlap and
names the likely cause; ``check_alignment`` fails loudly when under half the annotated ids could match.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.core.codes import encode, encode_grouped, sorted_unique
from abcompare.core.errors import AbcompareWarning, AlignmentError
from abcompare.core.vocabulary import plural

__all__ = ["AlignmentReport", "alignment_report", "check_alignment", "fraction_in_run"]

_EXAMPLES = 3


@dataclass(frozen=True)
class AlignmentReport:
    """How well the annotated ids (grade >= threshold) of a run's queries match the run's hit keys.

    ``annotated_ids`` counts distinct relevant ids; ``annotated_ids_in_run`` how many of them appear
    anywhere among the run's keys (so could ever match). ``queries_without_annotated_hits`` are the
    annotated queries none of whose relevant ids is among their hits, a query the run lacks included
    (``queries_missing_from_run`` names those). ``diagnosis``/``fix`` explain a shape mismatch.
    """

    annotated_ids: int
    annotated_ids_in_run: int
    fraction_in_run: float
    annotated_queries: int
    run_queries: int
    queries_without_annotated_hits: tuple[str, ...]
    queries_missing_from_run: tuple[str, ...]
    hit_lists_with_repeated_keys: int
    example_annotated_ids: tuple[str, ...] = ()
    example_hit_keys: tuple[str, ...] = ()
    diagnosis: str | None = None
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Flat scalars for MLflow (lists become counts plus a few examples)."""
        out = asdict(self)
        for name in ("queries_without_annotated_hits", "queries_missing_from_run"):
            out[name] = len(getattr(self, name))
        for name in ("example_annotated_ids", "example_hit_keys"):
            out[name] = ", ".join(getattr(self, name))
        out["diagnosis"] = self.diagnosis or ""
        out["fix"] = self.fix or ""
        return out

    def summary(self) -> str:
        """One line for the console."""
        text = (
            f"alignment: {self.annotated_ids_in_run}/{self.annotated_ids} annotated ids appear among "
            f"hit keys ({self.fraction_in_run:.0%}); "
            f"{plural(len(self.queries_without_annotated_hits), 'query')} without one among its hits; "
            f"{plural(self.hit_lists_with_repeated_keys, 'hit list')} with a repeated key"
        )
        return f"{text}. {self.diagnosis}" if self.diagnosis else text


#: Ids as the Arrow diagnostics take them: a Series, an Index, an Arrow array or a plain sequence.
Strings = pd.Series | pd.Index | pa.Array | pa.ChunkedArray | Sequence[object]


def strings(values: Strings) -> pa.Array:
    """Ids as one Arrow string array (a Series, an Index or an Arrow array), so the diagnostics run as
    Arrow kernels: pandas' ``isin`` on Arrow-backed strings converts each value to Python (issue 38)."""
    array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, from_pandas=True)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array if pa.types.is_large_string(array.type) else pc.cast(array, pa.large_string())


def is_in(values: Strings, universe: Strings) -> np.ndarray:
    """``values.isin(universe)`` for strings, by Arrow's hash kernel (null matches null, as pandas does)."""
    values, universe = strings(values), strings(universe)
    if len(universe) > 4 * len(values):  # hash the small side, probe the large one, then only what matched
        universe = pc.unique(universe.filter(pc.is_in(universe, value_set=values)))
    found = pc.is_in(values, value_set=universe)
    return found.to_numpy(zero_copy_only=False).astype(bool)


def document_ids(run_df: pd.DataFrame) -> pd.Series:
    """Each hit's document: its ``document_id`` when set, else the part of its key before the first '#'.

    By Arrow kernels over the whole column (pandas' ``str.split`` on these strings is a Python loop)."""
    keys = strings(run_df["key"].astype("str"))
    chunked = pc.any(pc.match_substring(keys, "#")).as_py()  # else each key is its document already
    from_key = pc.list_element(pc.split_pattern(keys, "#", max_splits=1), 0) if chunked else keys
    if "document_id" in run_df:
        given = run_df["document_id"]
        doc = pc.utf8_trim_whitespace(strings(given.astype("str").where(given.notna())))
        usable = pc.and_(pc.is_valid(doc), pc.not_equal(doc, "")).fill_null(False)
        from_key = pc.if_else(usable, doc, from_key)
    return pd.Series(from_key.to_pandas(), index=run_df.index).astype("str")


def _before_hash(values: pa.Array) -> pa.Array:
    return pc.list_element(pc.split_pattern(values, "#", max_splits=1), 0)


# what Python's ``\s`` matches in a str (str.isspace), spelled for RE2, which has no Unicode \s
_SPACE = (
    r"[\t\n\x0b\x0c\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+"
)


def _no_space(values: pa.Array) -> pa.Array:
    return pc.replace_substring_regex(values, _SPACE, "")


def _no_zeros(values: pa.Array) -> pa.Array:
    # Python's (?<![0-9])0+(?=[0-9]) -> '': RE2 has no lookaround, so the neighbours are matched and kept;
    # a match ends in a digit, so the next one's non-digit neighbour is never consumed by the previous one
    return pc.replace_substring_regex(values, r"(^|[^0-9])0+([0-9])", r"\1\2")


def _lower(values: pa.Array) -> pa.Array:
    return pc.utf8_lower(values)  # what pandas' str.lower runs on Arrow-backed strings


# (name, transform of annotated ids, transform of hit keys, diagnosis template, fix)
_SHAPES: tuple[tuple[str, Callable | None, Callable | None, str, str], ...] = (
    (
        "document-vs-chunk",
        None,
        _before_hash,
        "annotation ids look like document ids (e.g. {a}) while hit keys look like chunk keys (e.g. {k}); "
        "{p} of annotated ids match once the '#...' chunk suffix is dropped",
        "use level: document (hits collapse to their document id), or set hit ids equal to the annotated ids",
    ),
    (
        "chunk-vs-document",
        _before_hash,
        None,
        "annotation ids look like chunk keys (e.g. {a}) while hit keys look like document ids (e.g. {k}); "
        "{p} of annotated ids match once the '#...' chunk suffix is dropped",
        "annotate document ids (and use level: document), or give hits chunk_index/id so keys name the chunk",
    ),
    (
        "case",
        _lower,
        _lower,
        "annotation ids and hit keys differ in upper/lower case (e.g. {a} vs {k}); {p} match ignoring case",
        "write annotation ids exactly as the hits' ids (keys are case-sensitive)",
    ),
    (
        "whitespace",
        _no_space,
        _no_space,
        "annotation ids and hit keys differ in whitespace (e.g. {a} vs {k}); {p} match without it",
        "strip stray spaces/tabs from the ids in the annotation file or the hits",
    ),
    (
        "leading-zeros",
        _no_zeros,
        _no_zeros,
        "annotation ids and hit keys differ in zero padding (e.g. {a} vs {k}); {p} match without it",
        "write numeric ids the same way in both (e.g. '7' or '007', not a mix)",
    ),
)


def _fraction(annotated: pa.Array, keys: pa.Array) -> float:
    return float(is_in(annotated, keys).mean()) if len(annotated) else float("nan")


def alignment_report(
    run_df: pd.DataFrame, annotations_df: pd.DataFrame, *, relevance_threshold: int = 1
) -> AlignmentReport:
    """Measure how the run's keys meet the relevant annotations of the run's queries.

    Parameters
    ----------
    run_df : pandas.DataFrame
        A run table.
    annotations_df : pandas.DataFrame
        ``query_id, key, grade``.
    relevance_threshold : int
        The grade from which an annotation is relevant (the comparison's own threshold).

    Returns
    -------
    AlignmentReport
        How many annotated ids ever appear among the hit keys, which queries never retrieve one, how many
        lists repeat a key, and a diagnosis with the fix when the shapes disagree. When no query id is
        shared, all annotations are measured (and the diagnosis says so).

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query_id": ["q"], "rank": [1], "key": ["doc-1#chunk-0"]})
    >>> annotations = pd.DataFrame({"query_id": ["q"], "key": ["doc-1"], "grade": [1]})
    >>> report = alignment_report(run, annotations)
    >>> report.fraction_in_run, report.diagnosis.startswith("annotation ids look like document ids")
    (0.0, True)
    """
    run_q, run_keys = strings(run_df["query_id"].astype("str")), strings(run_df["key"].astype("str"))
    query_codes, run_query_set = encode_grouped(run_q)  # each id hashed once; the rest works on codes
    key_codes, run_key_set = encode(run_keys)
    relevant, shared_queries, scope = _scope(annotations_df, relevance_threshold, run_query_set)
    ann_q, ann_keys = relevant["query_id"].astype("str"), relevant["key"].astype("str")
    scope_keys = pd.Series(pd.unique(_comparable_keys(scope)), dtype="str")
    key_index = run_key_set
    if "span_document" in scope:  # a missed evidence span could match when its document was retrieved
        key_index = pc.unique(pa.concat_arrays([run_key_set, strings(document_ids(run_df))]))
    in_run = int(is_in(scope_keys, key_index).sum())
    fraction = in_run / len(scope_keys) if len(scope_keys) else float("nan")

    annotated_queries = pd.Index(pd.unique(ann_q))
    # only a hit whose key is annotated for some query can be an annotated pair: the rest skip _pairs_in
    rows = np.flatnonzero(np.append(is_in(run_key_set, ann_keys), False)[key_codes])
    candidates = pa.array(rows, type=pa.int64())
    pairs = _pairs_in(run_q.take(candidates), run_keys.take(candidates), ann_q, ann_keys)
    found = pd.Index(pd.unique(np.asarray(run_q.take(pa.array(rows[pairs], type=pa.int64())), dtype=object)))
    # a query absent from the run has no hits, so none of its annotated ids is among them: it counts
    without = tuple(str(q) for q in annotated_queries[~is_in(annotated_queries, found)])
    missing = tuple(str(q) for q in annotated_queries[~is_in(annotated_queries, run_query_set)])
    repeated = _lists_with_repeats(query_codes, key_codes, len(run_key_set))

    diagnosis, fix = _diagnose(
        scope_keys, run_key_set, key_index, fraction, bool(shared_queries.any()), ann_q, run_query_set, run_df
    )
    return AlignmentReport(
        annotated_ids=len(scope_keys),
        annotated_ids_in_run=in_run,
        fraction_in_run=fraction,
        annotated_queries=len(annotated_queries),
        run_queries=len(run_query_set),
        queries_without_annotated_hits=without,
        queries_missing_from_run=missing,
        hit_lists_with_repeated_keys=repeated,
        example_annotated_ids=tuple(scope_keys[:_EXAMPLES].tolist()),
        example_hit_keys=tuple(str(k) for k in key_index[:_EXAMPLES].to_pylist()),
        diagnosis=diagnosis,
        fix=fix,
    )


def _scope(
    annotations_df: pd.DataFrame, relevance_threshold: float, run_query_set: Strings
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    """The relevant annotations, which of them are of a run query, and those measured (all of them when no
    query is shared)."""
    relevant = annotations_df[annotations_df["grade"] >= relevance_threshold]
    shared_queries = is_in(relevant["query_id"].astype("str"), run_query_set)
    return relevant, shared_queries, relevant[shared_queries] if shared_queries.any() else relevant


def fraction_in_run(
    query_ids: Strings, keys: Strings, annotations_df: pd.DataFrame, *, relevance_threshold: float = 1
) -> float:
    """``alignment_report(...).fraction_in_run`` from the hits' query ids and keys alone (no dedupe, no
    diagnosis): what the alignment check compares, at the cost of hashing each distinct id once.
    Annotations with missed-span placeholders (``span_document``) need the report."""
    run_query_set = pc.unique(strings(query_ids))
    _, _, scope = _scope(annotations_df, relevance_threshold, run_query_set)
    scope_keys = pd.unique(_comparable_keys(scope))
    return float(is_in(scope_keys, keys).mean()) if len(scope_keys) else float("nan")


def _lists_with_repeats(query_codes: np.ndarray, key_codes: np.ndarray, n_keys: int) -> int:
    """How many queries' hit lists hold a key twice: one integer per (query, key) pair, hashed once."""
    pair = query_codes * (n_keys + 1) + key_codes
    repeated = pd.Series(pair).duplicated().to_numpy()
    return len(sorted_unique(query_codes[repeated & (query_codes >= 0)]))


def _comparable_keys(annotations: pd.DataFrame) -> pd.Series:
    """Annotation keys, with span-level placeholders (missed evidence) replaced by their document id."""
    keys = annotations["key"].astype("str")
    if "span_document" not in annotations:
        return keys
    return annotations["span_document"].astype("str").where(annotations["span_document"].notna(), keys)


def _pairs_in(query: Strings, key: Strings, within_query: Strings, within_key: Strings) -> np.ndarray:
    """Whether each (query, key) is among the pairs (within_query, within_key): one integer code per pair
    (both sides' strings encoded together), where ``MultiIndex.isin`` makes a Python tuple of each row."""
    n = len(query)
    query_codes, _ = _codes(pa.concat_arrays([strings(query), strings(within_query)]))
    key_codes, n_keys = _codes(pa.concat_arrays([strings(key), strings(within_key)]))
    pair = query_codes * (n_keys + 1) + key_codes
    return pc.is_in(pa.array(pair[:n]), value_set=pa.array(pair[n:])).to_numpy(zero_copy_only=False)


def _codes(values: pa.Array) -> tuple[np.ndarray, int]:
    """Each string's code (null is a value of its own) and how many distinct values there are."""
    encoded = pc.dictionary_encode(values, null_encoding="encode")
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), len(encoded.dictionary)


def _quote(values) -> str:
    first = values[:2]
    return ", ".join(
        repr(str(v)) for v in (first.to_pylist() if isinstance(first, pa.Array) else list(first))
    )


def _diagnose(
    annotated: pd.Series,
    run_key_set: pa.Array,
    key_index: pa.Array,
    fraction: float,
    queries_overlap: bool,
    ann_q: pd.Series,
    run_query_set: pa.Array,
    run_df: pd.DataFrame,
) -> tuple[str | None, str | None]:
    """The most likely reason annotated ids miss the hit keys, with its fix; None when nothing stands out."""
    if len(annotated) == 0:
        return (
            "there are no relevant annotations for the run's queries",
            "check the annotation file and the relevance threshold",
        )
    if not queries_overlap and len(run_query_set):
        return (
            f"no query id of the run appears in the annotations (run {_quote(run_query_set)}, "
            f"annotations {_quote(pd.unique(ann_q))})",
            "use the same query ids in the run and in the query set / annotations",
        )
    if np.isnan(fraction) or fraction >= 0.999:
        return None, None
    best: tuple[float, str, str] | None = None
    annotated_strings, run_key_strings = strings(annotated), strings(run_key_set)
    # a shape is named when it matches 20 points more than the ids as they are: above 80% none can
    for _, on_ann, on_keys, template, fix in _SHAPES if fraction + 0.2 <= 1.0 else ():
        a = on_ann(annotated_strings) if on_ann else annotated_strings
        k = on_keys(run_key_strings) if on_keys else strings(key_index)  # a set: unique keys suffice
        matched = _fraction(a, k)
        if matched >= fraction + 0.2 and (best is None or matched > best[0]):
            example_a = annotated[~is_in(annotated, key_index)]
            text = template.format(a=_quote(example_a), k=_quote(key_index), p=f"{matched:.0%}")
            best = (matched, text, fix)
    if best is not None:
        return best[1], best[2]
    if "rank" in run_df and len(run_df) and _keys_are_positions(run_df):
        return (
            "hit keys are list positions ('0', '1', ...): the hits carry no id, document_id, source "
            "or content",
            "set RagHit.id (or document_id + chunk_index) so keys name what was retrieved",
        )
    if fraction < 0.5:
        return (
            f"only {fraction:.0%} of annotated ids appear among hit keys (annotations {_quote(annotated)}, "
            f"hit keys {_quote(key_index)})",
            "make annotation ids equal the hit keys: a hit's key is its id, else document_id#chunk_index, "
            "else source_path#chunk_index, ... (see abcompare.core.hits.stable_key)",
        )
    return None, None


def _keys_are_positions(run_df: pd.DataFrame) -> bool:
    """Whether most hit keys are the hit's list position (rank - 1) written as a number."""
    before = run_df["rank"] - 1
    if pd.api.types.is_integer_dtype(before.dtype) and not before.isna().any():
        positions = pc.cast(pa.array(before.to_numpy(dtype=np.int64)), pa.large_string())
    else:
        positions = strings(before.astype("str"))
    same = pc.equal(strings(run_df["key"].astype("str")), positions).fill_null(False)
    return bool(same.to_numpy(zero_copy_only=False).mean() > 0.5)


def check_alignment(
    report: AlignmentReport, min_fraction: float = 0.5, allow_misaligned: bool = False
) -> AlignmentReport:
    """Raise ``AlignmentError`` when fewer than ``min_fraction`` of annotated ids could ever match a hit key.

    With ``allow_misaligned`` the problem is an ``AbcompareWarning`` instead. Returns the report.
    """
    fraction = report.fraction_in_run
    if not np.isnan(fraction) and fraction >= min_fraction:
        return report
    what = (
        f"only {report.annotated_ids_in_run} of {report.annotated_ids} annotated ids "
        f"({fraction:.0%}) appear among the hit keys"
        if not np.isnan(fraction)
        else "no relevant annotations for the run's queries"
    )
    message = (
        f"{what}: {report.diagnosis}"
        if report.diagnosis and not report.diagnosis.startswith("only")
        else what
    )
    hint = report.fix or "make annotation ids equal the hit keys"
    if allow_misaligned:
        warnings.warn(
            f"{message} ({hint}); continuing because allow_misaligned is set", AbcompareWarning, stacklevel=2
        )
        return report
    raise AlignmentError(
        message, field="annotations", hint=f"{hint}; or set evaluation.allow_misaligned to report anyway"
    )
