"""Headless Chromium for UI tests: a small DevTools client (the Chrome DevTools Protocol over a WebSocket,
written here on the standard library) that opens pages, reads what the screen paints, scrolls them (MLflow's
virtualized tables render only what is scrolled to) and takes screenshots.

Only 127.0.0.1 is contacted: the browser runs with networking features off and talks to a local server.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from support.clock import Deadline, pause
from support.environment import PARTS, chromium_path, missing_part

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
]  # fmt: skip


def artifacts_dir(name: str) -> Path:
    """Where a browser test keeps its screenshots for a person to look at: ``test-artifacts/<name>`` at the
    repository root, or under ``$ABCOMPARE_TEST_ARTIFACTS``."""
    root = Path(
        os.environ.get("ABCOMPARE_TEST_ARTIFACTS") or Path(__file__).resolve().parents[2] / "test-artifacts"
    )
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chromium() -> str:
    """Debian's ``chromium`` (``.ci/run`` installs it when missing); skip (fail in CI) without it."""
    found = chromium_path()
    if found is None:
        missing_part(PARTS["chromium"])
    return found


class DevTools:
    """One headless Chromium page driven through the DevTools protocol: navigate, evaluate, screenshot."""

    def __init__(self, width: int = 1600, height: int = 1200) -> None:
        self.profile = tempfile.mkdtemp(prefix="abcompare-chromium-")
        flags = [*FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]
        self.process = subprocess.Popen(
            [chromium(), *flags, "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = self._port()
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30).read())
        page = next(t for t in targets if t["type"] == "page")
        self.socket = _connect(page["webSocketDebuggerUrl"])
        self.next_id = 0
        self.resize(width, height)

    def resize(self, width: int, height: int) -> None:
        """The page's viewport is exactly ``width`` x ``height`` (the window's own frame takes none of it)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)  # fmt: skip

    def _port(self) -> int:
        assert self.process.stderr is not None
        deadline = Deadline(60)  # only so a broken browser cannot hang the suite
        while not deadline.passed():
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                return int(found.group(1))
            if not line and self.process.poll() is not None:
                break
        raise RuntimeError("Chromium did not start its DevTools endpoint")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        _send(self.socket, json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(_receive(self.socket))
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def open(self, url: str, until: str, timeout: float = 120) -> None:
        """Navigate to ``url`` and wait until the page's text contains ``until``."""
        self.call("Page.navigate", url=url)
        self.wait_for(until, timeout)

    def wait_for(self, text: str, timeout: float = 120) -> None:
        deadline = Deadline(timeout)  # a hang guard, not a speed check
        probe = f"document.documentElement.outerHTML.includes({json.dumps(text)})"
        while not self.evaluate(probe):
            if deadline.passed():
                raise AssertionError(f"{text!r} never appeared on the page")
            pause(0.25)

    def painted_row(self, name: str) -> dict[str, Any] | None:
        """What the screen paints on the line of the visible text ``name``: the texts the browser would
        hit-test, from the name's left edge to the viewport's right edge at the name's vertical centre
        (``document.elementFromPoint``: what is painted, not where the DOM places it), or None when
        ``name`` is not painted inside the viewport."""
        return self.evaluate(f"({PAINTED_ROW})({json.dumps(name)})")

    def painted_rows(self, names: list[str], timeout: float = 30) -> dict[str, dict[str, Any] | None]:
        """:meth:`painted_row` of each name once the page has settled: every name painted and at the same
        place on two reads 0.4 s apart (a page still laying out moves them), or, after ``timeout``, the last
        reads (None where a name is not painted: the caller's check then fails on it)."""
        deadline = Deadline(timeout)  # a hang guard, not a speed check
        last = None
        while True:
            rows = {name: self.painted_row(name) for name in names}
            if (rows == last and None not in rows.values()) or deadline.passed():
                return rows
            last = rows
            pause(0.4)

    def plot_texts(self, selector: str) -> list[dict[str, Any]] | None:
        """The texts of the SVG inside the first element matching ``selector`` (a plot), each with the centre
        of its box and whether it is painted: inside the viewport, and the browser's hit test at its centre
        lands in that plot (nothing else covers it; a plot's labels let clicks through to its canvas, so
        the hit is the plot, not the label itself). None when nothing matches ``selector``."""
        return self.evaluate(f"({PLOT_TEXTS})({json.dumps(selector)})")

    def box(self, name: str) -> dict[str, float] | None:
        """Where the page lays out the first element holding the text ``name`` itself (its DOM box, painted
        or not: below the fold too), or None when there is none."""
        return self.evaluate(f"({LAID_OUT})({json.dumps(name)})")

    def cut_off(self, name: str) -> dict[str, float] | None:
        """Whether the visible text ``name`` is painted whole: None when its last character is painted
        (inside the viewport and inside every ancestor that clips its overflow, as a truncating cell does
        with an ellipsis), else where its text ends and where it is cut; a text not on the page is cut
        at 0."""
        return self.evaluate(f"({CUT_OFF})({json.dumps(name)})")

    def html(self) -> str:
        return str(self.evaluate("document.documentElement.outerHTML"))

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.kill()
            self.process.wait(timeout=30)
            shutil.rmtree(self.profile, ignore_errors=True)


#: See :meth:`DevTools.painted_row`: the innermost element whose own text is ``name`` and that is painted
#: (the top element at its centre is it or inside it), then the texts hit-tested along its line.
PAINTED_ROW = """(name) => {
  const own = (e) => [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
  const width = window.innerWidth, height = window.innerHeight;
  for (const e of document.querySelectorAll('body *')) {
    if (own(e) !== name && !(e.children.length === 0 && e.innerText && e.innerText.trim() === name)) continue;
    const box = e.getBoundingClientRect();
    const y = box.top + box.height / 2, x = box.left + Math.min(box.width / 2, 20);
    if (box.width === 0 || y < 0 || y >= height || x < 0 || x >= width) continue;
    const top = document.elementFromPoint(x, y);
    if (!top || !(top === e || e.contains(top) || top.contains(e))) continue;
    const texts = [];
    let last = null;
    for (let px = box.left + 1; px < width; px += 4) {
      const hit = document.elementFromPoint(px, y);
      if (!hit || hit === last) continue;
      last = hit;
      const text = (hit.innerText || '').trim();
      if (text && !text.includes('\\n') && texts[texts.length - 1] !== text) texts.push(text);
    }
    return {x: box.left, y: y, right: box.right, texts: texts};
  }
  return null; }"""


#: See :meth:`DevTools.plot_texts`.
PLOT_TEXTS = """(selector) => {
  const root = document.querySelector(selector);
  if (!root) return null;
  return [...root.querySelectorAll('svg text')].map(e => {
    const box = e.getBoundingClientRect(), x = box.left + box.width / 2, y = box.top + box.height / 2;
    const inside = box.width > 0 && x >= 0 && x < window.innerWidth && y >= 0 && y < window.innerHeight;
    const hit = inside ? document.elementFromPoint(x, y) : null;
    return {text: e.textContent.trim(), x: x, y: y, painted: !!hit && root.contains(hit)};
  }).filter(t => t.text); }"""

#: See :meth:`DevTools.cut_off`.
CUT_OFF = """(name) => {
  const own = (e) => [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
  const e = [...document.querySelectorAll('body *')].find(e => own(e) === name);
  if (!e) return {text_right: 0, cut_at: 0};
  const range = document.createRange();
  range.selectNodeContents(e);
  const right = range.getBoundingClientRect().right;
  let edge = window.innerWidth;
  for (let a = e; a && a !== document.body; a = a.parentElement) {
    const style = getComputedStyle(a);
    if (style.overflowX !== 'visible' || style.textOverflow === 'ellipsis') {
      edge = Math.min(edge, a.getBoundingClientRect().right);
    }
  }
  return right <= edge + 0.5 ? null : {text_right: right, cut_at: edge}; }"""

#: See :meth:`DevTools.box`.
LAID_OUT = """(name) => {
  const own = (e) => [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
  const e = [...document.querySelectorAll('body *')].find(e => own(e) === name);
  if (!e) return null;
  const box = e.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, left: box.left}; }"""


# ------------------------------------------------------------------------------------------ WebSocket
def _connect(url: str) -> socket.socket:
    """A WebSocket client connection (RFC 6455 handshake) to ``ws://127.0.0.1:PORT/PATH``."""
    found = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
    assert found, url
    host, port, path = found.group(1), int(found.group(2)), found.group(3)
    sock = socket.create_connection((host, port), timeout=120)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    sock.sendall(request.encode())
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(4096)
    assert response.startswith(b"HTTP/1.1 101"), response[:200]
    return sock


def _send(sock: socket.socket, text: str) -> None:
    payload = text.encode()
    header = bytes([0x81])  # FIN, text frame
    mask = os.urandom(4)
    if len(payload) < 126:
        header += bytes([0x80 | len(payload)])
    elif len(payload) < 1 << 16:
        header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
    else:
        header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(header + mask + masked)


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the browser closed the DevTools connection")
        data += chunk
    return data


def _receive(sock: socket.socket) -> str:
    """One whole message (continuation frames joined; the server's frames are not masked)."""
    parts = []
    while True:
        first, second = _exactly(sock, 2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack(">H", _exactly(sock, 2))[0]
        elif length == 127:
            length = struct.unpack(">Q", _exactly(sock, 8))[0]
        payload = _exactly(sock, length)
        opcode = first & 0x0F
        if opcode in (0x1, 0x0):
            parts.append(payload)
            if first & 0x80:
                return b"".join(parts).decode()
        elif opcode == 0x8:
            raise ConnectionError("the browser closed the DevTools connection")
        # ping/pong frames are ignored: Chromium does not require answers on a short session
