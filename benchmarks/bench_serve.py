"""The reference server under load: skillc serve against its 0.1.0 configuration, waitress and nginx.

Every server answers with the same ``skillc.serve.answer`` (nginx with the generated config), in its
own process, on loopback; the load generator (``loadgen.py``, asyncio) runs in this one.  Measured
in one run, for each server:

* ``load``: 2,000 GETs over new connections, 50 in flight (issue 17: p99 <= 300 ms, no errors);
* ``drip``: 500 such GETs while 200 clients each send a request head one byte a second (slow clients
  must be timed out without denying others);
* ``rss``: the server's peak resident memory after ten 30 MB compressible assets were fetched at once, each
  with gzip (the gzip cache must be bounded by bytes).

``before`` is 0.1.0's front end (http.server with a listen backlog of 5, no deadline for a request's
head, a gzip cache bounded by count, every file read whole); ``after`` is ``skillc serve``; ``waitress`` is waitress 3
(a well-kept pure-Python WSGI server) carrying ``answer`` over WSGI, when installed.
"""

from __future__ import annotations

import base64
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from loadgen import load

HERE = Path(__file__).resolve().parent
SKILLS = 200
DRIPPERS = 200
DRIP_LOAD = 500  # requests sent while they drip (5 s timeout each)
BIG_ASSETS, BIG_MB = 10, 30


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bundle(corpus: Path, work: Path) -> tuple[Path, list[str]]:
    """A bundle of the first SKILLS skills of the corpus, and ten big assets."""
    from urllib.parse import quote

    repo = work / "repo"
    dirs = sorted({p.parent for p in corpus.rglob("SKILL.md")})[:SKILLS]
    for d in dirs:
        shutil.copytree(d, repo / d.relative_to(corpus))
    out = work / "out"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1", "SKILLC_CACHE_DIR": str(work / "cache")}
    subprocess.run([sys.executable, "-m", "skillc", "build", str(repo), "--out", str(out), "--no-site",
                    "--quiet"], check=True, env=env, capture_output=True)
    # The big assets are put in after the build (scanning 300 MB for secrets takes minutes): not in
    # the manifest, every server hashes what it sends.  Base64 of seeded random bytes: gzip keeps
    # about three quarters of it.
    (out / "assets").mkdir(exist_ok=True)
    for i in range(BIG_ASSETS):
        (out / "assets" / f"big{i}.txt").write_bytes(base64.encodebytes(random.Random(i).randbytes(BIG_MB * 3 << 18)))
    ids = [d.relative_to(corpus).as_posix() for d in dirs]
    paths = ["/api/skills", "/api/skill-collections"] + [f"/api/skills/{quote(i, safe='')}" for i in ids[:50]]
    return out, paths


def _serve(variant: str, root: str, port: int) -> None:
    """The server process (``bench_serve.py --serve VARIANT ROOT PORT``)."""
    from skillc.bundle import serve

    root_path = Path(root)
    if variant == "after":
        server = serve.make_server(root_path, port=port, quiet=True)
    elif variant == "before":
        serve.STREAM_MIN = 1 << 62  # (0.1.0 read every file whole)
        server_class = type("Before", (serve.BundleServer,), {"request_queue_size": 5, "max_connections": 1 << 20})
        handler = type("H", (serve.Handler,), {"bundle": serve.Bundle(root_path, 1 << 40), "quiet": True,
                                               "header_timeout": 1e9})
        server = server_class(("127.0.0.1", port), handler)
    else:
        import waitress

        waitress.serve(_wsgi(serve.Bundle(root_path)), host="127.0.0.1", port=port, threads=8, _quiet=True)
        return
    server.serve_forever()


def _wsgi(bundle):
    from skillc.bundle.serve import FileBody, Request, answer

    def app(environ, start_response):
        reply = answer(bundle, Request(environ["REQUEST_METHOD"], environ.get("REQUEST_URI") or environ["PATH_INFO"],
                                       environ.get("HTTP_ACCEPT_ENCODING"), environ.get("HTTP_IF_NONE_MATCH")))
        start_response(f"{reply.status} -", list(reply.headers))
        if isinstance(reply.body, FileBody):  # (a large file: waitress sends it from the file too)
            return environ["wsgi.file_wrapper"](reply.body.file)
        return [reply.body]

    return app


def _start(variant: str, root: Path, nginx_prefix: Path) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    if variant == "nginx":
        cmd = _nginx_command(root, port, nginx_prefix)
    else:
        cmd = [sys.executable, str(Path(__file__)), "--serve", variant, str(root), str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{variant} did not start")


def _nginx_command(root: Path, port: int, prefix: Path) -> list[str]:
    import re

    prefix.mkdir(exist_ok=True)
    server = (root / "_routing/nginx.conf").read_text()
    server = re.sub(r"listen\s+80;", f"listen 127.0.0.1:{port};", server)
    server = re.sub(r"root\s+/srv/skillc;", f"root {root};", server)
    temps = "".join(f"{k}_temp_path {prefix}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = prefix / "nginx.conf"
    conf.write_text(f"{user}worker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log;\n"
                    f"daemon off;\nevents {{}}\nhttp {{\ninclude /etc/nginx/mime.types;\naccess_log off;\n"
                    f"{temps}{server}\n}}\n")
    return [shutil.which("nginx") or "/usr/sbin/nginx", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "e.log")]


def _drippers(port: int, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        socks = []
        for _ in range(DRIPPERS):
            try:
                socks.append(socket.create_connection(("127.0.0.1", port), timeout=1))
            except OSError:
                pass
        head = b"GET /api/skills HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 1000
        for i in range(len(head)):
            if stop.wait(1.0):
                break
            for s in socks:
                try:
                    s.send(head[i:i + 1])
                except OSError:
                    pass
        for s in socks:
            s.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _measure(variant: str, root: Path, paths: list[str], work: Path) -> list[tuple[str, str]]:
    proc, port = _start(variant, root, work / "nginx")
    rows = []
    try:
        load("127.0.0.1", port, paths, 200, 10)  # (warm-up)
        result = load("127.0.0.1", port, paths)
        rows.append((f"{variant}: load", result.summary()))
        stop = threading.Event()
        dripping = _drippers(port, stop)
        time.sleep(2.0)
        result = load("127.0.0.1", port, paths, DRIP_LOAD, timeout=5.0)
        stop.set()
        dripping.join()
        rows.append((f"{variant}: drip", result.summary()))
        if variant != "nginx":
            big = [p.relative_to(root).as_posix() for p in sorted(root.glob("assets/big*.txt"))]
            load("127.0.0.1", port, ["/" + b for b in big], len(big), len(big), timeout=120)  # (all at once)
            rows.append((f"{variant}: rss", f"{_peak_rss_mb(proc.pid):.0f} MB peak after {len(big)} x {BIG_MB} MB gzip"))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return rows


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    root, paths = _bundle(corpus, workdir)
    variants = ["before", "after"]
    try:
        import waitress  # noqa: F401

        variants.append("waitress")
    except ImportError:
        pass
    if shutil.which("nginx") or os.path.exists("/usr/sbin/nginx"):
        variants.append("nginx")
    rows = []
    for variant in variants:
        rows.extend(_measure(variant, root, paths, workdir))
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        _serve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
