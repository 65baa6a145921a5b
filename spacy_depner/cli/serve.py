"""``python -m spacy_depner serve``: a trained entity component as a Label
Studio ML backend (``serving.label_studio_backend``) on the standard
library's WSGI server (``serving.standard_server``); ``serving.wsgi`` runs
the same application under any WSGI server."""

from pathlib import Path
from typing import Optional

import typer

from ..pipeline.uncertainty import MEASURES
from ..readers.annotation_tasks import ALIGNMENT_MODES, OFFSET_UNITS
from ..serving.label_studio_backend import LabelStudioBackend, log
from ..serving.standard_server import SOCKET_TIMEOUT, backend_server
from ..serving.wsgi import MAX_BODY_BYTES, WSGIApplication, basic_auth_setting
from .arguments import CODE_HELP, GPU_ID_HELP, PIPELINE_HELP, import_code, use_gpu


def serve(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface, e.g. in a container)"),
    port: int = typer.Option(
        9090, min=0, max=65535, help="Port to listen on: Label Studio's Model URL is http://HOST:PORT"
    ),
    component: Optional[str] = typer.Option(None, help="The entity component (default: the pipeline's only one)"),
    measure: str = typer.Option(
        "expected_errors", help=f"Task score Label Studio sorts by (as rank's --measure): {', '.join(MEASURES)}"
    ),
    epochs: int = typer.Option(10, min=1, help="Passes over the annotations received in each training"),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        help="Folder (made if its parent exists) for each project's last trained pipeline: "
        "OUTPUT/PROJECT/model-last and the annotations.json it trained on",
    ),
    alignment_mode: str = typer.Option(
        "strict",
        help="Annotated spans off token boundaries: skipped (strict), or snapped to the tokens inside them "
        "(contract) or that they touch (expand), as import-annotations --alignment-mode",
    ),
    skip_misaligned: bool = typer.Option(
        True, help="Skip spans off token boundaries (counted in /health); --no-skip-misaligned leaves their task out"
    ),
    offsets: str = typer.Option(
        "characters",
        help="What annotated spans' offsets count, as import-annotations --offsets: characters or utf-16 (code units)",
    ),
    label_studio_url: Optional[str] = typer.Option(
        None, envvar="LABEL_STUDIO_URL", help="Label Studio's address, for Start Training to fetch a project's export"
    ),
    label_studio_api_key: Optional[str] = typer.Option(
        None, envvar="LABEL_STUDIO_API_KEY", help="A Label Studio access token (legacy token) for that export"
    ),
    basic_auth_user: Optional[str] = typer.Option(
        None, envvar="BASIC_AUTH_USER", help="Require HTTP basic auth with this user (Label Studio's model settings)"
    ),
    basic_auth_pass: Optional[str] = typer.Option(None, envvar="BASIC_AUTH_PASS", help="... and this password"),
    max_body_mb: float = typer.Option(MAX_BODY_BYTES / (1 << 20), min=0.001, help="Larger request bodies get a 413"),
    timeout: float = typer.Option(SOCKET_TIMEOUT, min=1, help="Seconds a connection may stay silent"),
    code: Optional[Path] = typer.Option(None, "--code", "-c", help=CODE_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_ID_HELP),
    quiet: bool = typer.Option(False, help="Do not log each request on stderr"),
) -> None:
    """Serve a pipeline to Label Studio as an ML backend.

    Label Studio (project Settings > Model > Connect Model, URL
    http://HOST:PORT) gets predictions with each entity's probability and a
    task score to sort by; submitted annotations retrain the entity component
    of their project in the background (reviewed regions annotated, the rest
    missing), and the retrained model is served when its training ends."""
    if alignment_mode not in ALIGNMENT_MODES:
        raise typer.BadParameter(f"--alignment-mode {alignment_mode}: use one of {', '.join(ALIGNMENT_MODES)}")
    if offsets not in OFFSET_UNITS:
        raise typer.BadParameter(f"--offsets {offsets}: use one of {', '.join(OFFSET_UNITS)}")
    auth = basic_auth_setting(basic_auth_user, basic_auth_pass)
    use_gpu(gpu_id)
    import_code(code)
    backend = LabelStudioBackend(
        pipeline,
        component,
        measure,
        epochs,
        output=output,
        alignment_mode=alignment_mode,
        skip_misaligned=skip_misaligned,
        offsets=offsets,
        label_studio_url=label_studio_url,
        label_studio_api_key=label_studio_api_key,
    )
    application = WSGIApplication(backend, auth, max_body_bytes=int(max_body_mb * (1 << 20)))
    server = backend_server(application, host, port, quiet, timeout)
    log(f"serving {pipeline} ({backend.pipe.name}) at http://{host}:{server.server_port}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log("stopped")
    finally:
        server.server_close()
