"""``python -m spacy_depner serve``: a trained entity component as a Label
Studio ML backend (``serving.label_studio_backend``)."""

from pathlib import Path
from typing import Optional

import typer

from ..pipeline.uncertainty import MEASURES
from ..serving.label_studio_backend import LabelStudioBackend, backend_server, log
from .arguments import CODE_HELP, GPU_ID_HELP, PIPELINE_HELP, import_code, use_gpu


def serve(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0: every interface, e.g. in a container)"),
    port: int = typer.Option(
        9090, min=1, max=65535, help="Port to listen on: Label Studio's Model URL is http://HOST:PORT"
    ),
    component: Optional[str] = typer.Option(None, help="The entity component (default: the pipeline's only one)"),
    measure: str = typer.Option(
        "expected_errors", help=f"Task score Label Studio sorts by (as rank's --measure): {', '.join(MEASURES)}"
    ),
    epochs: int = typer.Option(10, min=1, help="Passes over the annotations received in each training"),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Directory for the last trained pipeline (model-last) and its annotations.json"
    ),
    code: Optional[Path] = typer.Option(None, "--code", "-c", help=CODE_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_ID_HELP),
    quiet: bool = typer.Option(False, help="Do not log each request on stderr"),
) -> None:
    """Serve a pipeline to Label Studio as an ML backend.

    Label Studio (project Settings > Model > Connect Model, URL
    http://HOST:PORT) gets predictions with each entity's probability and a
    task score to sort by; submitted annotations retrain the entity component
    in the background (reviewed regions annotated, the rest missing), and the
    retrained model is served when its training ends."""
    use_gpu(gpu_id)
    import_code(code)
    backend = LabelStudioBackend(pipeline, component, measure, epochs, output=output)
    server = backend_server(backend, host, port, quiet)
    log(f"serving {pipeline} ({backend.pipe.name}) at http://{host}:{server.server_port}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log("stopped")
    finally:
        server.server_close()
