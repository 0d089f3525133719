"""The versioned relevance prompt a judge is asked with: UMBRELA's graded 0-3 prompt (Upadhyay et al. 2024,
after Thomas et al., SIGIR 2024), shortened for small models. A change to the wording is a new version, so a
cached grade is never reused for a prompt it was not asked with."""

from __future__ import annotations

from abcompare.core.vocabulary import JUDGE_PROMPT_VERSIONS

PROMPT_VERSIONS: tuple[str, ...] = JUDGE_PROMPT_VERSIONS
PROMPT_VERSION = PROMPT_VERSIONS[-1]

#: The longest hit text shown to a judge (characters); longer hits are cut, and the cut is the same for
#: every provider, so the cache key (which holds the full text) and the prompt agree.
MAX_HIT_CHARS = 2000

SYSTEM = "You are a search quality rater evaluating the relevance of passages."

USER = """Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the \
following meanings:
0 = represent that the passage has nothing to do with the query,
1 = represents that the passage seems related to the query but does not answer it,
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or \
hidden amongst extraneous information and
3 = represents that the passage is dedicated to the query and contains the exact answer.

Query: {query}
Passage: {passage}

Split this problem into steps: consider the underlying intent of the search, measure how well the content \
matches a likely intent of the query (M), measure how trustworthy the passage is (T), and consider the \
aspects above to decide on a final score (O). The final score must be an integer value only.
Do not provide any code in result. Provide only the final score in the format: ##final score: score"""

#: What the assistant's turn starts with when the grade is read from next-token probabilities.
ANSWER_PREFIX = "##final score: "


def messages(query_text: str, hit_text: str, version: str = PROMPT_VERSION) -> list[dict[str, str]]:
    """The chat messages asking for the grade of ``hit_text`` for ``query_text`` (the judge sees nothing
    else: no ids, no variant, no rank)."""
    if version not in PROMPT_VERSIONS:
        raise ValueError(f"unknown prompt version {version!r}; known: {', '.join(PROMPT_VERSIONS)}")
    passage = hit_text[:MAX_HIT_CHARS]
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER.format(query=query_text.strip(), passage=passage.strip())},
    ]
