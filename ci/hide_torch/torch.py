"""Hides PyTorch from the processes of `nox -s tests` (this folder is on their PYTHONPATH).

tvm-ffi imports PyTorch eagerly whenever it is installed, which adds about 2.5 s to every
`import tvm`; the suites start hundreds of fresh interpreters that never use it. The one test
that does (tvm-core/tests/test_runtime_tensor.py::test_dlpack_torch_cpu) runs its check in a
process without this folder on the path.
"""

raise ImportError("PyTorch is hidden from this process by ci/hide_torch (nox -s tests)")
