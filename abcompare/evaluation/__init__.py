"""The evaluator: ranked hits + annotated ids -> per-query metrics, in the "ai4j" or the "trec" convention.

``RagEvaluator`` and ``TrecEvaluator`` score one query; ``evaluate_run`` scores a whole run, vectorised.
"""

from __future__ import annotations

from abcompare.evaluation.batch import evaluate_run
from abcompare.evaluation.convention import CONVENTIONS
from abcompare.evaluation.measures import MEASURES, metric_name, mlflow_key, parse_metric
from abcompare.evaluation.rag_evaluator import RagEvaluation, RagEvaluator
from abcompare.evaluation.trec import TrecEvaluator, trec_order

__all__ = [
    "CONVENTIONS",
    "MEASURES",
    "RagEvaluation",
    "RagEvaluator",
    "TrecEvaluator",
    "evaluate_run",
    "metric_name",
    "mlflow_key",
    "parse_metric",
    "trec_order",
]
