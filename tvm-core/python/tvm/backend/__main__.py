"""``python -m tvm.backend``: what is installed, what loaded, and why something did not."""

import warnings

warnings.simplefilter("ignore")

import tvm  # noqa: E402, F401 - activates the installed backends
from tvm.backend import report  # noqa: E402

print(report())
