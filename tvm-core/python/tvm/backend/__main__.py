"""``python -m tvm.backend``: what is installed, what loaded, and why something did not."""

import argparse
import warnings

parser = argparse.ArgumentParser(
    prog="python -m tvm.backend",
    description="Print the installed TVM backends: distribution, version, status, the reason a "
    "backend did not load and what to do, the runtime libraries and the environment variables "
    "that select backends. Paste the output into a bug report.",
)
parser.parse_args()
warnings.simplefilter("ignore")

import tvm  # noqa: E402, F401 - activates the installed backends
from tvm.backend import report  # noqa: E402

print(report())
