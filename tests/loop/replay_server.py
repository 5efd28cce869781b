"""A real Prometheus on loopback, scraping a local page that replays recorded samples.

:class:`ReplayPage` serves ``/metrics`` in the Prometheus text format; each scrape shows the next
recorded sample of every series, each sample held for ``hold`` scrapes (so a range query at the
scrape interval sees every one). :func:`start_prometheus` runs Debian's ``prometheus`` binary with a
one-job config pointing at the page; it is stopped when the context ends.
"""

from __future__ import annotations

import contextlib
import http.server
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

PROMETHEUS = shutil.which("prometheus")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _labels(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


class ReplayPage:
    """``series``: (name, labels, recorded values); scrape ``i`` shows value ``i // hold`` (the last one after)."""

    def __init__(self, series: list[tuple[str, dict[str, str], list[float]]], hold: int) -> None:
        self.series, self.hold, self.scrapes = series, hold, 0
        self.length = min(len(values) for _, _, values in series)
        page = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                index = min(page.scrapes // page.hold, page.length - 1)
                page.scrapes += 1
                body = "".join(f"{name}{_labels(labels)} {values[index]:.17g}\n"
                               for name, labels, values in page.series).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def done(self) -> bool:
        return self.scrapes >= self.length * self.hold + 1

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def start_prometheus(folder: Path, target_port: int, interval_s: float) -> Iterator[str]:
    """A Prometheus scraping ``127.0.0.1:target_port`` every ``interval_s``; yields its URL."""
    assert PROMETHEUS is not None
    port = free_port()
    config = folder / "prometheus.yml"
    every = f"{round(interval_s * 1000)}ms"
    config.write_text(f"global:\n  scrape_interval: {every}\n  scrape_timeout: {every}\n"
                      f"scrape_configs:\n  - job_name: replay\n    static_configs:\n"
                      f"      - targets: ['127.0.0.1:{target_port}']\n")
    process = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
                                f"--web.listen-address=127.0.0.1:{port}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("prometheus did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
