"""The sweep's quality-vs-latency plane draws its front only through differences larger than the noise:
equal work (every candidate on the noise-aware front) draws no line and labels no point."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pandas as pd

from abcompare.outcome.svg import pareto_svg

SVG = "{http://www.w3.org/2000/svg}"


def grid(front: list[bool]) -> pd.DataFrame:
    return pd.DataFrame(
        {"candidate": ["a", "b", "c"], "delta": [0.03, 0.01, -0.01],
         "verdict": ["no significant difference"] * 3,
         "efficiency.seconds_per_query": [0.0012, 0.0020, 0.0009], "pareto_front": front}
    )  # fmt: skip


def drawn(svg: str) -> tuple[list, set[str], str]:
    root = ET.fromstring(svg)
    lines = list(root.iter(f"{SVG}polyline"))
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    return lines, set(texts) & {"a", "b", "c"}, " ".join(texts)


def test_equal_work_draws_no_front_and_says_why() -> None:
    # c is timed fastest, but nothing is faster than another beyond the noise: no fake front through it
    lines, labels, text = drawn(pareto_svg(grid([True, True, True]), "ndcg@10"))
    assert lines == [] and labels == set()
    assert "no candidate is faster than another by more than the noise" in text


def test_a_front_beyond_the_noise_joins_its_points_by_latency() -> None:
    lines, labels, text = drawn(pareto_svg(grid([True, False, True]), "ndcg@10"))
    assert labels == {"a", "c"} and len(lines) == 1
    # c (0.9 ms) then a (1.2 ms): the line runs left to right
    xs = [float(p.split(",")[0]) for p in lines[0].get("points").split()]
    assert xs == sorted(xs) and len(xs) == 2
    assert "none is better and faster by more than the noise" in text
