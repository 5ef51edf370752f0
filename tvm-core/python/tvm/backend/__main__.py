"""``python -m tvm.backend``: what is installed, what loaded, and why something did not.

The report is printed whatever ``TVM_BACKEND_STRICT`` says (``import tvm`` neither raises nor
warns under this command); with it set, the exit status is 1 when a backend it makes an error
failed. A reader that stops early (``| head``) ends the command quietly.
"""

import argparse
import os
import sys
import warnings

parser = argparse.ArgumentParser(
    prog="python -m tvm.backend",
    description="Print the installed TVM backends: distribution, version, status, the reason a "
    "backend did not load and what to do, the runtime libraries and the environment variables "
    "that select backends. Paste the output into a bug report. With TVM_BACKEND_STRICT set, the "
    "exit status is 1 when a backend failed (with TVM_BACKEND_STRICT=all, or has no runtime).",
)
parser.parse_args()
warnings.simplefilter("ignore")

import tvm  # noqa: E402, F401 - activates the installed backends
from tvm.backend import _registry, report  # noqa: E402


def _print_quietly(text: str) -> None:
    """Write ``text`` to stdout in one write; characters stdout cannot encode are escaped, and a
    reader that closed the pipe ends nothing but the output."""
    try:
        sys.stdout.reconfigure(errors="backslashreplace")
    except (AttributeError, ValueError):  # stdout replaced by something that is no text stream
        pass
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        try:  # the exit's own flush of what is left must not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # a stdout without a file descriptor keeps its buffer
            pass


_print_quietly(report() + "\n")
sys.exit(1 if _registry.strict_failures() else 0)
