"""The async frame (context) size of Swift async functions in a binary.

A waiting call keeps one async frame per function on its chain, carved from the task's 1,016-byte
allocator slabs: a frame that does not fit the slab in use costs a new slab, one malloc and a
kilobyte per call in flight. Each async function has an "async function pointer" (mangled
suffix `Tu`): a 32-bit relative offset to its code, then the 32-bit size of the context its caller
allocates for it. This reads those sizes straight from the ELF file, so a change to the per-call
path can say which frames grew or shrank.

    python -m benchkit.async_frames Benchmarks/.build/release/BenchClient 'Channel.perform' ...
"""

import struct
import subprocess
import sys


def sections(data):
    """(address, offset, size) of each ELF64 little-endian section."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for index in range(shnum):
        base = shoff + index * shentsize
        _, kind, _, address, offset, size = struct.unpack_from("<IIQQQQ", data, base)
        if address and kind != 8:  # SHT_NOBITS (.bss) has no bytes in the file
            out.append((address, offset, size))
    return out


def context_size(data, table, address):
    """The context size stored in the async function pointer at `address`, or None."""
    for start, offset, size in table:
        if start <= address and address + 8 <= start + size:
            _, context = struct.unpack_from("<iI", data, offset + address - start)
            return context
    return None


def async_function_pointers(path):
    """[(demangled function name, context size)] for every async function pointer in `path`."""
    symbols = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    entries = []
    for line in symbols.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].endswith("Tu"):
            entries.append((int(parts[0], 16), parts[2]))
    names = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(name for _, name in entries),
                           capture_output=True, text=True, check=True).stdout.splitlines()
    with open(path, "rb") as handle:
        data = handle.read()
    table = sections(data)
    return [(name.removeprefix("async function pointer to "), context_size(data, table, address))
            for (address, _), name in zip(entries, names)]


def main(arguments):
    if not arguments:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    path, patterns = arguments[0], arguments[1:]
    for name, size in sorted(async_function_pointers(path), key=lambda entry: entry[0]):
        if not patterns or any(pattern in name for pattern in patterns):
            print(f"{size:6} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
