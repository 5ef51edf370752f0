"""TVMScript: ``from tvm.script import tir as T``."""
