"""Helpers around external tools (the system C compiler)."""
