"""Random GPU-style kernels with control flow, for differential tests of backends (the
conformance suite's ``test_random_kernels_match_the_cpu``).

A kernel (:func:`generate`) runs 4 blocks of 32 threads; each thread fills private arrays
(``L`` of int32, ``N`` of a narrow integer dtype) from its inputs, then runs random statements:
updates of an accumulator, stores into the private arrays at computed indices, nested ``if``,
``for`` (plain, unrolled, serial) and ``while`` loops, and ``let`` bindings, over random integer
expressions (wrapping arithmetic, divisions by non-zero divisors, min/max, bitwise operations,
shifts, selects, narrowing casts). Then it stores its accumulator into shared memory, waits at a
barrier, runs up to two rounds of exchange (read a neighbour's element, barrier, update its own,
barrier) and writes ``O[i]`` from its own values and a neighbour's. The reference is the same
statements in serial loops over the threads, one per phase between barriers, with the private
values kept per thread, for the CPU target. Every program is defined: nothing is read before it
is written and no divisor can be zero.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from tvm.tir.function import PrimFunc

BLOCKS, THREADS = 4, 32
N = BLOCKS * THREADS


@dataclasses.dataclass
class RandomKernel:
    """One random program: ``device`` for a GPU-style target, ``reference`` for the CPU, both
    named ``f`` and taking ``(A, B, C, O)``; ``text`` is the device kernel's TVMScript."""

    device: PrimFunc
    reference: PrimFunc
    text: str


class _Writer:
    """Random statements; private values are written ``L[k]`` for the device and ``L[i, k]`` for
    the reference (``per_thread``)."""

    def __init__(self, rng: random.Random, narrow: str, per_thread: bool):
        self.rng, self.narrow, self.per_thread = rng, narrow, per_thread
        self.names = ["i", "tx"]
        self.count = 0

    def private(self, name: str, index: str) -> str:
        return f"{name}[i, {index}]" if self.per_thread else f"{name}[{index}]"

    def leaf(self) -> str:
        r = self.rng.random()
        if r < 0.35:
            return self.rng.choice(["A[i]", "A[(i + 1) % 128]", "T.Cast('int32', B[i])", "T.Cast('int32', C[i])"])
        if r < 0.55:
            return self.private("acc", "0")
        if r < 0.7:
            return self.private("L", str(self.rng.randrange(4)))
        if r < 0.85:
            return self.rng.choice(self.names)
        value = self.rng.choice([0, 1, -1, 2, 3, 7, 255, 2**31 - 1, -(2**31), self.rng.randrange(-1000, 1000)])
        return f"T.int32({value})"

    def expr(self, depth: int) -> str:
        r = self.rng
        if depth == 0 or r.random() < 0.25:
            return self.leaf()
        a, b = self.expr(depth - 1), self.expr(depth - 1)
        kind = r.randrange(12)
        if kind < 3:
            return f"({a} {r.choice(['+', '-', '*'])} {b})"
        if kind == 3:  # a divisor with its lowest bit set is never zero
            return f"({a} {r.choice(['//', '%'])} ({b} | T.int32(1)))"
        if kind == 4:
            return f"T.{r.choice(['truncdiv', 'truncmod'])}({a}, ({b} | T.int32(1)))"
        if kind == 5:
            return f"T.{r.choice(['min', 'max'])}({a}, {b})"
        if kind == 6:
            return f"({a} {r.choice(['&', '|', '^'])} {b})"
        if kind == 7:
            return f"({a} {r.choice(['<<', '>>'])} T.int32({r.randrange(32)}))"
        if kind == 8:
            return f"T.Select({self.cond(depth - 1)}, {a}, {b})"
        if kind == 9:
            return f"T.Cast('int32', T.Cast('{r.choice(['int8', 'uint8', 'int16', 'uint16'])}', {a}))"
        if kind == 10:
            return f"T.Cast('int32', T.Cast('uint32', {a}) >> T.uint32({r.randrange(32)}))"
        return f"T.abs({a})"

    def cond(self, depth: int) -> str:
        ops = ["<", "<=", ">", ">=", "==", "!="]
        return f"({self.expr(depth)} {self.rng.choice(ops)} {self.expr(depth)})"

    def block(self, indent: int, depth: int) -> list[str]:
        saved = list(self.names)
        lines = [line for _ in range(self.rng.randrange(1, 3)) for line in self.statement(indent, depth)]
        self.names = saved
        return lines

    def statement(self, indent: int, depth: int) -> list[str]:
        r, pad = self.rng, "    " * indent
        acc = self.private("acc", "0")
        kind = r.randrange(9 if depth > 0 else 4)
        if kind < 2:
            return [f"{pad}{acc} = {acc} {r.choice(['+', '-', '^', '*'])} {self.expr(2)}"]
        if kind == 2:
            narrow = self.private("Nw", f"{self.expr(1)} & 3")
            return [f"{pad}{self.private('L', f'{self.expr(1)} & 3')} = {self.expr(2)}",
                    f"{pad}{narrow} = T.Cast('{self.narrow}', {self.expr(2)})",
                    f"{pad}{acc} = {acc} + T.Cast('int32', {self.private('Nw', str(r.randrange(4)))})"]  # fmt: skip
        if kind == 3:
            self.count += 1
            name = f"v{self.count}"
            line = f"{pad}{name} = {self.expr(2)}"
            self.names.append(name)
            return [line]
        self.count += 1
        if kind < 6:
            lines = [f"{pad}if {self.cond(1)}:", *self.block(indent + 1, depth - 1)]
            if r.random() < 0.5:
                lines += [f"{pad}else:", *self.block(indent + 1, depth - 1)]
            return lines
        if kind < 8:
            name = f"k{self.count}"
            loop = r.choice(["range", "T.unroll", "T.serial"])
            self.names.append(name)
            lines = [f"{pad}for {name} in {loop}({r.randrange(1, 5)}):", *self.block(indent + 1, depth - 1)]
            self.names.remove(name)
            return lines
        name = f"w{self.count}"
        return [f"{pad}{name} = T.alloc_buffer((1,), 'int32', scope='local')", f"{pad}{name}[0] = 0",
                f"{pad}while {name}[0] < {r.randrange(1, 4)}:", f"{pad}    {name}[0] = {name}[0] + 1",
                *self.block(indent + 1, depth - 1)]  # fmt: skip


def _exchange(rng: random.Random, w: _Writer) -> list[str]:
    """Rounds in which each thread reads a neighbour's element of ``S``, waits at a barrier and
    updates its own (waiting again): the device's lines (in the thread's body), or the
    reference's (top-level loops over the threads, one per phase)."""
    count = rng.randrange(3)
    if count == 0:
        return []
    op, op2 = rng.choice(["+", "-", "^", "*"]), rng.choice(["+", "^", "|"])
    if not w.per_thread:
        update = f"S[tx] = (S[tx] {op} t) {op2} {w.expr(1)}"
        return [f"for r in range({count}):", "    t = S[(tx + r + 1) % 32]", "    T.tvm_storage_sync('shared')",
                f"    {update}", "    T.tvm_storage_sync('shared')"]  # fmt: skip
    update = f"S[bx, tx] = (S[bx, tx] {op} Tr[i]) {op2} {w.expr(1)}"
    grid = f"for bx, tx in T.grid({BLOCKS}, {THREADS}):"
    return [f"    Tr = T.alloc_buffer(({N},), 'int32')", f"    for r in range({count}):",
            f"        {grid}", f"            i = bx * {THREADS} + tx", "            Tr[i] = S[bx, (tx + r + 1) % 32]",
            f"        {grid}", f"            i = bx * {THREADS} + tx", f"            {update}"]  # fmt: skip


def _texts(seed: int, narrow: str, wide: str) -> tuple[str, str]:
    """The device and reference TVMScript of random kernel ``seed`` (private narrow arrays of
    ``narrow``; inputs ``B``/``C`` of ``narrow``/``wide``)."""
    out = []
    for per_thread in (False, True):
        rng = random.Random(seed)
        w = _Writer(rng, narrow, per_thread)
        p = w.private
        body = [f"{p('L', 'j')} = A[(i + j) % 128] * (j + 1)", f"{p('Nw', 'j')} = B[(i + j) % 128]"]
        init = [f"for j in {rng.choice(['range', 'T.unroll', 'T.vectorized'])}(4):", *("    " + b for b in body)]
        init += [f"{p('acc', '0')} = 0", f"{p('acc', '0')} = {w.expr(2)}"]
        stmts = w.block(0, 2) + w.block(0, 2)
        rounds = _exchange(rng, w)
        shift, last = rng.randrange(THREADS), rng.randrange(4)
        store = f"S[{'bx, ' if per_thread else ''}tx] = {p('acc', '0')}"
        final = (
            f"O[i] = {p('acc', '0')} ^ S[{'bx, ' if per_thread else ''}(tx + {shift}) % 32] + {p('L', str(last))}"
            f" + T.Cast('int32', {p('Nw', '0')})"
        )
        head = [
            f"def f(A: T.Buffer(({N},), 'int32'), B: T.Buffer(({N},), '{narrow}'), C: T.Buffer(({N},), '{wide}'),",
            f"      O: T.Buffer(({N},), 'int32')):",
        ]
        if per_thread:
            lines = head + [
                f"    acc = T.alloc_buffer(({N}, 1), 'int32')",
                f"    L = T.alloc_buffer(({N}, 4), 'int32')",
                f"    Nw = T.alloc_buffer(({N}, 4), '{narrow}')",
                f"    S = T.alloc_buffer(({BLOCKS}, {THREADS}), 'int32')",
                f"    for bx, tx in T.grid({BLOCKS}, {THREADS}):",
                f"        i = bx * {THREADS} + tx",
                *("        " + x for x in init + stmts + [store]),
                *rounds,
                f"    for bx, tx in T.grid({BLOCKS}, {THREADS}):",
                f"        i = bx * {THREADS} + tx",
                f"        {final}",
            ]
        else:
            lines = head + [
                f"    for bx in T.thread_binding({BLOCKS}, thread='blockIdx.x'):",
                f"        S = T.alloc_buffer(({THREADS},), 'int32', scope='shared')",
                f"        for tx in T.thread_binding({THREADS}, thread='threadIdx.x'):",
                f"            i = bx * {THREADS} + tx",
                "            acc = T.alloc_buffer((1,), 'int32', scope='local')",
                "            L = T.alloc_buffer((4,), 'int32', scope='local')",
                f"            Nw = T.alloc_buffer((4,), '{narrow}', scope='local')",
                *("            " + x for x in init + stmts + [store, "T.tvm_storage_sync('shared')", *rounds, final]),
            ]
        out.append("\n".join(lines) + "\n")
    return out[0], out[1]


def generate(seed: int, narrow: str = "int8", wide: str = "uint16") -> RandomKernel:
    """Random kernel ``seed`` (the same seed gives the same program): private arrays and input
    ``B`` of integer dtype ``narrow``, input ``C`` of ``wide``."""
    from tvm.script import parse

    device, reference = _texts(seed, narrow, wide)
    return RandomKernel(parse(device), parse(reference), device)


def reference_output(kernel: RandomKernel, inputs: list[np.ndarray]) -> np.ndarray:
    """``O`` as ``kernel``'s reference computes it from ``inputs`` on the CPU."""
    import tvm

    out = tvm.runtime.empty((N,), "int32")
    tvm.compile(kernel.reference, target="c")["f"](*(tvm.runtime.tensor(x) for x in inputs), out)
    return out.numpy()


def random_inputs(rng: np.random.Generator, narrow: str = "int8", wide: str = "uint16") -> list[np.ndarray]:
    """``A``, ``B`` and ``C`` for a random kernel: extremes of int32 first, then random values."""
    a = rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype("int32")
    a[:4] = [-(2**31), 2**31 - 1, 0, -1]
    return [a, *(rng.integers(np.iinfo(d).min, np.iinfo(d).max, N, dtype=d, endpoint=True) for d in (narrow, wide))]


__all__ = ["BLOCKS", "N", "THREADS", "RandomKernel", "generate", "random_inputs", "reference_output"]
