"""The documentation site (``mkdocs.yml``, the pages of ``docs/``) builds strictly and offline: a broken link
or anchor, a page missing from the nav or a missing included file fails the build; the API reference has
every public name; the README's links land on pages and anchors the site has; and headless Chromium paints
the home page and the reference page with the theme (a screenshot, checked for what a person would see)."""

from __future__ import annotations

import html
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.browser import FLAGS, chromium
from support.environment import needs
from support.readme import REPO, doc_raw

import abcompare

pytestmark = needs("mkdocs_material", "mkdocstrings")

#: Material's header colour for the palette mkdocs.yml names (``primary: indigo``): painted only when the
#: theme's stylesheets load.
INDIGO = (0x3F, 0x51, 0xB5)


def build(folder: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the project laid out in ``folder`` into ``site``."""
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about its successor
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=folder, env=environment, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def shown(page: Path) -> str:
    """The text a built page shows: its HTML without tags (code is split into highlighted spans)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's site, built once for this module."""
    out = tmp_path_factory.mktemp("site")
    done = build(REPO, out)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNING" not in output, output
    return out


def test_the_site_builds_strictly_with_every_page_of_docs(site: Path) -> None:
    pages = sorted(p.relative_to(REPO / "docs").with_suffix(".html") for p in (REPO / "docs").glob("*.md"))
    assert pages and all((site / page).is_file() for page in pages)


def test_a_broken_anchor_and_a_page_left_out_of_the_nav_fail_the_build(tmp_path: Path) -> None:
    """The strictness is real: the same project with one bad anchor and one page outside the nav fails,
    naming both."""
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(REPO / name, tmp_path / name)
    for name in ("docs", "configs", "examples"):
        shutil.copytree(REPO / name, tmp_path / name)
    (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n\nNo nav entry leads here.\n", encoding="utf-8")
    speed = tmp_path / "docs" / "speed.md"
    broken = "\n[x](metrics.md#no-such-heading)\n"
    speed.write_text(speed.read_text(encoding="utf-8") + broken, encoding="utf-8")
    done = build(tmp_path, tmp_path / "site")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "orphan.md" in output and "#no-such-heading" in output, output


def test_the_reference_documents_every_public_name(site: Path) -> None:
    """Every name of ``abcompare.__all__`` has its ``:::`` entry, rendered from its docstring."""
    entries = re.findall(r"^::: (\S+)$", doc_raw("docs/reference.md"), re.M)
    names = {entry.rsplit(".", 1)[1] for entry in entries}
    assert names == set(abcompare.__all__) - {"__version__"}
    page = (site / "reference.html").read_text(encoding="utf-8")
    for entry in entries:
        module, name = entry.rsplit(".", 1)
        assert getattr(importlib.import_module(module), name) is getattr(abcompare, name), entry
        assert f'id="{entry}"' in page, entry
    assert page.count("Parameters:") >= 10  # the numpydoc sections, rendered


def test_the_readmes_links_land_on_pages_and_anchors_the_site_has(site: Path) -> None:
    links = re.findall(r"\]\(([^)\s]+)\)", doc_raw("README.md"))
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) >= 20
    for link in local:
        path, _, anchor = link.partition("#")
        assert (REPO / path).is_file(), link
        if anchor:
            page = site / Path(path).relative_to("docs").with_suffix(".html")
            assert f'id="{anchor}"' in page.read_text(encoding="utf-8"), link


def test_the_pages_include_the_shipped_configs_and_the_readmes_real_output(site: Path) -> None:
    """The configs page shows each file of ``configs/`` as it is; Getting started shows the README's two
    commands and its sample output (both included, never copied)."""
    configs = shown(site / "configs.html")
    shipped = sorted((REPO / "configs").glob("*.yaml"))
    assert shipped
    for config in shipped:
        name = re.search(r"^name: (\S+)", config.read_text(encoding="utf-8"), re.M).group(1)
        assert config.name in configs and f"name: {name}" in configs, config.name
    started = shown(site / "getting-started.html")
    assert "abcompare run configs/rrf_vs_dbsf.yaml" in started
    assert "Verdict dbsf: no significant difference on ndcg@10" in started
    assert "--8<--" not in started and "--8<--" not in configs  # every snippet was resolved


@needs("chromium")
@pytest.mark.parametrize("page", ["index.html", "reference.html"])
def test_chromium_paints_the_page_with_the_theme(site: Path, tmp_path: Path, page: str) -> None:
    """A screenshot of the built page, opened from the file system as a reader would: the theme's indigo
    header across the top, and below it text on white (many shades: glyphs, not an empty page)."""
    from PIL import Image

    shot = tmp_path / f"{page}.png"
    subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
         "--window-size=1280,900", (site / page).as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 900)
    header = [image.getpixel((x, 10)) for x in range(0, 1280, 40)]
    indigo = [pixel for pixel in header if all(abs(a - b) <= 8 for a, b in zip(pixel, INDIGO, strict=True))]
    assert len(indigo) >= 0.9 * len(header), header
    body = image.crop((280, 80, 1000, 900))
    colours = body.getcolors(maxcolors=1 << 16) or []
    white = sum(count for count, colour in colours if colour == (255, 255, 255))
    assert len(colours) >= 50, len(colours)  # anti-aliased text, not a blank or single-colour page
    assert 0.5 <= white / (body.width * body.height) <= 0.98
