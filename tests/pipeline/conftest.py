"""The ``device`` fixture of the transformer-encoder tests (encoder_checks):
the ops a component runs on."""

import pytest
from thinc.api import NumpyOps, Ops, set_current_ops


def _gpu_reason():
    import torch
    from thinc.util import has_cupy_gpu

    return None if has_cupy_gpu and torch.cuda.is_available() else "no GPU here (thinc finds no CUDA device with cupy)"


@pytest.fixture(params=["cpu", "ops", "gpu"])
def device(request):
    """cpu: NumpyOps (numba kernels); ops: thinc's base Ops, the array code a
    GPU runs, here on numpy arrays; gpu: CupyOps, where there is a GPU."""
    if request.param == "ops":
        set_current_ops(Ops())
    if request.param == "gpu":
        reason = _gpu_reason()
        if reason:
            pytest.skip(reason)
        from thinc.api import require_gpu

        require_gpu()
    yield request.param
    set_current_ops(NumpyOps())
