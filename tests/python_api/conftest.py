"""Options and fixtures of the Python package's tests.

    pytest tests/python_api                        # CPU tensors
    pytest tests/python_api --device gpu:0         # the same tests with tensors on a GPU
    pytest tests/python_api --test-data DIR        # the folder of scripts/fetch-test-data.sh

Without --test-data (or WICK_TEST_DATA_DIR), the model tests run scripts/fetch-test-data.sh
into build-python/test-data once (it downloads only what is missing or wrong).
"""
import os
import pathlib
import subprocess
import zlib

import numpy as np
import pytest

import wick

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pytest_addoption(parser):
    parser.addoption("--device", default="cpu", help="the device the tensors of the tests live on (cpu, gpu:0)")
    parser.addoption("--test-data", default=None, help="the folder of scripts/fetch-test-data.sh")


def pytest_report_header(config):
    return (f"wick {wick.__version__} from {os.path.dirname(wick.__file__)}; device {config.getoption('--device')}; "
            f"devices {[str(d) for d in wick.available_devices()]}")


@pytest.fixture(scope="session")
def device(request):
    d = wick.Device(request.config.getoption("--device"))
    if d not in wick.available_devices():
        pytest.fail(f"--device {d}: not available here ({wick.gpu_backend_status()})")
    return d


@pytest.fixture
def rng(request):
    # One seed per test, from its name: the inputs do not depend on which tests ran before.
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.fixture(scope="session")
def test_data(request):
    d = request.config.getoption("--test-data") or os.environ.get("WICK_TEST_DATA_DIR")
    if not d:
        d = str(ROOT / "build-python" / "test-data")
        subprocess.run(["bash", str(ROOT / "scripts" / "fetch-test-data.sh"), d], check=True)
    return pathlib.Path(d)
