"""A LangChain retriever as a Python retriever of a comparison (``run: {python: NAME}``).

Any object with ``invoke(query) -> documents`` fits (a LangChain ``BaseRetriever``, a vector store's
``as_retriever()``, an ensemble); LangChain itself is not imported. Each ``Document`` becomes a
``RagHit``: its id (``Document.id``, or ``metadata[id_key]``) is the hit's key, its position the rank,
its ``page_content`` the content::

    retrieve = langchain_retriever(store.as_retriever(search_kwargs={"k": 20}), id_key="doc_id")
    run_comparison(config, retrievers={"prod": retrieve})
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from abcompare.core.hits import RagHit

if TYPE_CHECKING:
    import pandas as pd


class Invokable(Protocol):
    """What LangChain's retrievers have in common here: ``invoke(query) -> documents``."""

    def invoke(self, query: str) -> Sequence[object]: ...


def langchain_retriever(
    retriever: Invokable, *, id_key: str | None = None
) -> Callable[[pd.DataFrame], dict[str, list[RagHit]]]:
    """A LangChain retriever as the retriever callable ``run_comparison`` takes.

    Parameters
    ----------
    retriever : object with ``invoke(query: str) -> list[Document]``
        A LangChain retriever (``vector_store.as_retriever()``, any ``BaseRetriever``), called once per
        query, in the queries' order.
    id_key : str, optional
        The metadata field holding the id the judgments use (a BEIR ``doc_id``); default ``Document.id``.

    Returns
    -------
    callable
        ``fn(queries) -> {query_id: [RagHit, ...]}``: each document's id is its hit's key, its position the
        rank, its ``page_content`` the content (a ``score`` in its metadata is kept).

    Examples
    --------
    >>> from types import SimpleNamespace as Document
    >>> class Shelf:
    ...     def invoke(self, query):
    ...         return [Document(id=i, page_content=i, metadata={}) for i in ("d2", "d1")]
    >>> import pandas as pd
    >>> hits = langchain_retriever(Shelf())(pd.DataFrame({"query_id": ["q1"], "text": ["which?"]}))
    >>> [(hit.id, hit.rank) for hit in hits["q1"]]
    [('d2', 1), ('d1', 2)]
    """

    def retrieve(queries: pd.DataFrame) -> dict[str, list[RagHit]]:
        return {
            str(query_id): [
                document_hit(doc, rank, id_key) for rank, doc in enumerate(retriever.invoke(text), 1)
            ]
            for query_id, text in zip(queries["query_id"], queries["text"], strict=True)
        }

    return retrieve


def document_hit(document: object, rank: int, id_key: str | None = None) -> RagHit:
    """One LangChain ``Document`` as a hit at ``rank``; a ``score`` in its metadata is kept."""
    metadata = getattr(document, "metadata", None) or {}
    hit_id = metadata.get(id_key) if id_key else getattr(document, "id", None)
    score = metadata.get("score")
    return RagHit(
        id=None if hit_id is None else str(hit_id),
        rank=rank,
        content=getattr(document, "page_content", None),
        score=float(score) if isinstance(score, int | float) else None,
    )
