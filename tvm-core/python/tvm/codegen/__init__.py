"""Code generators: the shared C-family printer, the CPU host (C) and device-module creation."""
