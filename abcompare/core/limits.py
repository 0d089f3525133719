"""Every bound abcompare puts on what it reads or writes, in one place: beyond them a value is a located
error, never a silent wrap-around (a grade of 1e30 cast to int64 turns negative), an allocation of
gigabytes, or a value MLflow refuses halfway through a run. The README and the schema state the same."""

from __future__ import annotations

# ------------------------------------------------------------------------------------ config settings
#: Upper bounds of the numeric settings: far beyond any real use, low enough that a typo cannot allocate
#: gigabytes or run for days. The schema states them, and so does the error.
MAX_CUTOFF = 10_000
MAX_RESAMPLES = 1_000_000
MAX_QUERIES = 100_000_000
MAX_SEED = 2**63 - 1
#: Hard ceiling of candidates in one sweep (``max_variants`` may only lower it).
MAX_VARIANTS = 1000
#: Every metric abcompare computes lies in [0, 1]: an effect or a margin of this size is the metric's whole
#: range (a non-inferiority margin of 1 or more could never fail; 1e308 overflowed in numpy).
METRIC_RANGE = 1.0
#: Ray sizing: CPUs of a private Ray, GPUs per encoder actor, encoder actors, reruns of a lost task.
MAX_CPUS = 4096
MAX_GPUS_PER_ENCODER = 64
MAX_ENCODERS = 4096
MAX_RETRIES = 100

# ------------------------------------------------------------------------ inputs that multiply work
#: Rewrites of one query in a query-planning variants file: each is retrieved and fused (100,000 rewrites
#: of one query ran out of memory at 7.7 GB); real plans use a handful.
MAX_REWRITES_PER_QUERY = 100
#: Hits of one query in a run (a file, or a Python retriever's answer): far past any cutoff, and as deep as
#: a retrieving variant's ``depth`` may go.
MAX_HITS_PER_QUERY = 10_000
#: Collections in one comparison (``datasets:``): each is loaded and every variant runs on each.
MAX_COLLECTIONS = 100

# ------------------------------------------------------------------------------------ config files
#: Deepest nesting of mappings and lists a config may have (real configs use about six levels).
MAX_DEPTH = 32
#: Most values a config may hold once every alias is expanded (real configs hold a few hundred).
MAX_VALUES = 10_000
#: Largest config file read.
MAX_CONFIG_BYTES = 1_000_000

# ------------------------------------------------------------------------------------ names and MLflow
#: Longest treatment / retriever / split name: leaves room for ``<name>.true_positive_count_at_k.p_adjusted``
#: inside MLflow's 250-character key limit, and stays a readable column and file name.
MAX_NAME_LENGTH = 100
#: Longest free-text label (comparison name, run name, experiment name) MLflow stores whole.
MAX_LABEL_LENGTH = 250
#: Longest tag key MLflow accepts.
MAX_TAG_KEY_LENGTH = 250
#: Longest tag value MLflow stores (a user's tag longer than this is refused; abcompare's own are cut).
MAX_TAG_VALUE_LENGTH = 5_000
#: Longest param value MLflow stores (longer values are cut, whole settings live in the config artifact).
MAX_PARAM_VALUE_LENGTH = 6_000

# ------------------------------------------------------------------------------------ data files

#: Relevance grades are integers in the 32-bit range (trec_eval reads them as C ints; real scales are 0-4).
MIN_GRADE = -(2**31)
MAX_GRADE = 2**31 - 1
#: Character offsets, ranks, chunk indexes and page numbers: integers that float64 still holds exactly.
MAX_INDEX = 2**53
#: Deepest nesting of a JSON record (queries, corpus, spans, annotations, runs); real records nest two levels.
MAX_JSON_DEPTH = 64

# ------------------------------------------------------------------------------------ relevance judge
#: Most (query, hit) pairs one run may ask a judge about (``judge.max_pairs``).
MAX_JUDGE_PAIRS = 1_000_000
#: Longest wait for one answer of a judge's endpoint, and most retries of one call.
MAX_JUDGE_TIMEOUT_SECONDS = 3_600
MAX_JUDGE_RETRIES = 10
