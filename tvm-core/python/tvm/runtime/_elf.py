"""What the ELF header and dynamic symbol table of a library say, read without loading it: the
machine it was built for, and the functions it expects another library to define."""

from __future__ import annotations

import platform
import struct
import sys
from typing import Iterator, Optional

#: ELF ``e_machine`` values and the names ``platform.machine()`` gives those machines.
_MACHINES = {
    3: ("i386", "i686", "x86"),
    8: ("mips",),
    20: ("ppc",),
    21: ("ppc64", "ppc64le"),
    22: ("s390x",),
    40: ("arm", "armv7l", "armv6l"),
    62: ("x86_64", "amd64"),
    164: ("hexagon",),
    183: ("aarch64", "arm64"),
    243: ("riscv64",),
    258: ("loongarch64",),
}
_ELF_MAGIC = b"\x7fELF"


def _machine_name(code: int) -> str:
    names = _MACHINES.get(code)
    return names[0] if names else f"ELF machine {code}"


def foreign_machine(data: bytes) -> Optional[str]:
    """What the ELF image ``data`` is, when this machine cannot run it ("a library for aarch64,
    and this machine is x86_64"; a 32-bit or big-endian image in a 64-bit little-endian
    process); None when it can, when ``data`` is not ELF or this is not Linux (the dynamic
    loader then says why)."""
    if not sys.platform.startswith("linux") or len(data) < 20 or data[:4] != _ELF_MAGIC:
        return None
    little = data[5:6] == b"\x01"
    (code,) = struct.unpack_from("<H" if little else ">H", data, 18)
    here = platform.machine().lower()
    bits = 64 if data[4:5] == b"\x02" else 32
    if here not in _MACHINES.get(code, ()):
        return f"a library for {_machine_name(code)}, and this machine is {here}"
    ours = struct.calcsize("P") * 8
    if bits != ours or little != (sys.byteorder == "little"):
        order = "little" if little else "big"
        return f"a {bits}-bit {order}-endian library, and this process is {ours}-bit {sys.byteorder}-endian"
    return None


def is_elf64_le(data: bytes) -> bool:
    """Whether ``data`` is a little-endian ELF64 image."""
    return data[:4] == _ELF_MAGIC and data[4:6] == b"\x02\x01"


def _sections(data: bytes) -> list[tuple]:
    """(type, address, offset, size, link, entry size) of each section of ELF64 image ``data``."""
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        _name, stype, _flags, addr, offset, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize
        )
        out.append((stype, addr, offset, size, link, entsize))
    return out


def symbols(data: bytes, table_types: tuple[int, ...] = (2, 11)) -> Iterator[tuple[bytes, int, int, list]]:
    """``(name, section index, value, sections)`` of each symbol in the ELF64 image ``data``'s
    tables of ``table_types`` (SHT_SYMTAB 2, SHT_DYNSYM 11). struct.error or IndexError for a
    malformed image."""
    sections = _sections(data)
    for stype, _addr, offset, size, link, entsize in sections:
        if stype not in table_types or entsize == 0:
            continue
        strings = sections[link][2]
        for k in range(size // entsize):
            st_name, _info, _other, st_shndx, st_value, _size = struct.unpack_from(
                "<IBBHQQ", data, offset + k * entsize
            )
            yield data[strings + st_name : data.find(b"\0", strings + st_name)], st_shndx, st_value, sections


def undefined_dynamic_symbols(data: bytes) -> set[bytes]:
    """Names of the functions and data the little-endian ELF64 image ``data`` leaves for other
    libraries to define (its undefined dynamic symbols); empty for anything else."""
    if not is_elf64_le(data):
        return set()
    try:
        return {name for name, shndx, _value, _sections in symbols(data, (11,)) if shndx == 0 and name}
    except (struct.error, IndexError):
        return set()  # a malformed table: the loader reports it
