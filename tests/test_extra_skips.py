"""A test file that needs Ray skips where ``ray.data`` cannot be imported: the ray extra
installs ``ray[data]``, and Ray without its data extra (no pyarrow, no pandas) imports
``ray`` but not ``ray.data``, which ``apply-ray`` reads its input with."""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SKIPS_ON_RAY = re.compile(r"""importorskip\(\s*["']ray["']""")
SKIPS_ON_RAY_DATA = re.compile(r"""importorskip\(\s*["']ray\.data["']""")


def files_skipping_on_ray_alone(tests: Path) -> list:
    return sorted(
        str(path.relative_to(tests))
        for path in tests.rglob("test_*.py")
        if SKIPS_ON_RAY.search(path.read_text(encoding="utf8"))
        and not SKIPS_ON_RAY_DATA.search(path.read_text(encoding="utf8"))
    )


def test_ray_tests_skip_on_ray_data():
    assert files_skipping_on_ray_alone(TESTS) == []


def test_the_check_reads_both_forms(tmp_path):
    (tmp_path / "test_a.py").write_text('ray = pytest.importorskip("ray")\n')
    (tmp_path / "test_b.py").write_text('pytest.importorskip("ray.data")\nray = pytest.importorskip("ray")\n')
    assert files_skipping_on_ray_alone(tmp_path) == ["test_a.py"]
