"""A real Label Studio server on localhost for the slow tests of the
annotation loop (``tests/readers/test_label_studio_server.py``) and of the
ML backend (``tests/cli/test_serve_label_studio.py``).

Label Studio pins its own Django stack, so it runs from a virtual environment
of its own, made once in ``~/.cache/spacy-depner/label-studio-<version>``
(``pip install label-studio==<version>``, a few minutes) and reused. A test
is skipped, saying why, only when that environment cannot be installed (no
package index reachable); a server that does not come up, or an API that
answers otherwise, fails it. The server may call back to this machine (an ML
backend on localhost): ``ML_BLOCK_LOCAL_IP`` and ``SSRF_PROTECTION_ENABLED``
are off, as Label Studio's documentation says for a backend on the same
host."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

VERSION = "1.23.2"
TOKEN = "0123456789abcdef0123456789abcdef01234567"


def label_studio() -> Path:
    """The ``label-studio`` command of the cached environment, installed if need be."""
    venv = Path.home() / ".cache" / "spacy-depner" / f"label-studio-{VERSION}"
    command = venv / "bin" / "label-studio"
    if command.is_file():
        return command
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"label-studio=={VERSION}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"label-studio=={VERSION} could not be installed (no package index?): {done.stderr[-500:]}")
    return command


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


class Server:
    """Label Studio's REST API at ``url`` (token authentication)."""

    def __init__(self, url: str, log: Path):
        self.url, self.log = url, log

    def call(self, method: str, path: str, body=None):
        request = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode("utf8"),
            method=method,
            headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                text = answer.read().decode("utf8")
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read().decode('utf8')[:1000]}") from None
        return json.loads(text) if text else None


def labels(text: str, *spans, from_name: str = "label", to_name: str = "text") -> list:
    """A Label Studio annotation result marking each (word, label) of ``spans`` at its first place in ``text``."""
    return [
        {
            "from_name": from_name,
            "to_name": to_name,
            "type": "labels",
            "value": {"start": text.index(word), "end": text.index(word) + len(word), "text": word, "labels": [label]},
        }
        for word, label in spans
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    command = label_studio()
    data = tmp_path_factory.mktemp("label_studio")
    port = free_port()
    log = open(data / "server.log", "w")
    process = subprocess.Popen(
        [
            str(command),
            "start",
            "--no-browser",
            "--port",
            str(port),
            "--data-dir",
            str(data / "data"),
            "--username",
            "annotator@example.com",
            "--password",
            "not-a-secret-1",
            "--user-token",
            TOKEN,
            "--enable-legacy-api-token",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=data,
        env={
            **os.environ,
            "LABEL_STUDIO_BASE_DATA_DIR": str(data / "data"),
            "ML_BLOCK_LOCAL_IP": "false",
            "SSRF_PROTECTION_ENABLED": "false",
        },
    )
    url = f"http://localhost:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(url + "/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if process.poll() is not None:
                pytest.fail(f"label-studio exited: {(data / 'server.log').read_text()[-2000:]}")
            time.sleep(1)
        else:
            pytest.fail(f"label-studio did not answer in 240 s: {(data / 'server.log').read_text()[-2000:]}")
        yield Server(url, data / "server.log")
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
