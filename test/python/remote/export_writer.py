"""Writes an S3 export (store format 2, docs/FORMAT.md) of a native DuckDB database file into a directory laid out
like a bucket (one file per key), for the read-side tests until exports come from the extension itself. It follows
src/remote/export_format.cpp: chunks cut 12 KiB then 256 KiB, all-zero chunks as holes, packs of up to 32 chunks,
binary export index pages of up to 4096 slots, text descriptors and heads named by their SHA-256."""
import hashlib
import pathlib
import struct
import time

FIRST_CHUNK = 12288
CHUNK = 262144
PACK_CHUNKS = 32
INDEX_SLOTS = 4096
ZERO = bytes(32)


def chunks_of(data):
    """(start, bytes) of each chunk of the file, in chunk order."""
    out = [(0, data[:FIRST_CHUNK])]
    start = FIRST_CHUNK
    while start < len(data):
        out.append((start, data[start : start + CHUNK]))
        start += CHUNK
    return out


class Export:
    """The keys of one export and where they were written."""

    def __init__(self, root, prefix=""):
        self.root = pathlib.Path(root)
        self.prefix = prefix
        self.packs = []
        self.index_pages = []
        self.descriptor = None
        self.slots = []

    def put(self, key, data):
        path = self.root / (self.prefix + key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def path(self, key):
        return self.root / (self.prefix + key)

    def put_content(self, kind, data):
        digest = hashlib.sha256(data).digest()
        self.put(f"{kind}/{digest.hex()}", data)
        return digest


def write_export(root, database_file, database="orders", branch="main", prefix="", snapshot_id=1):
    """Exports the bytes of `database_file` under `root/prefix`; returns the Export (descriptor hex in
    .descriptor, pack keys in .packs)."""
    data = pathlib.Path(database_file).read_bytes()
    export = Export(root, prefix)
    slots = []
    pack, members = b"", []

    def flush():
        nonlocal pack, members
        digest = export.put_content("packs", pack)
        export.packs.append(f"packs/{digest.hex()}")
        for index in members:
            chunk, _, offset, length = slots[index]
            slots[index] = (chunk, digest, offset, length)
        pack, members = b"", []

    for index, (_, content) in enumerate(chunks_of(data)):
        if not content.strip(b"\0"):
            slots.append((ZERO, ZERO, 0, 0))
            continue
        slots.append((hashlib.sha256(content).digest(), ZERO, len(pack), len(content)))
        pack += content
        members.append(index)
        if len(members) == PACK_CHUNKS:
            flush()
    if members:
        flush()
    export.slots = slots
    pages = []
    for first in range(0, len(slots), INDEX_SLOTS):
        page = slots[first : first + INDEX_SLOTS]
        blob = b"DIFXIDX2" + struct.pack("<II", len(page), 0)
        blob += b"".join(chunk + pack_hash + struct.pack("<QI", offset, length) for chunk, pack_hash, offset, length in page)
        pages.append(export.put_content("indexes", blob))
    export.index_pages = [f"indexes/{page.hex()}" for page in pages]
    descriptor = "differential-descriptor 2\n" + "".join(
        f"{key} {value}\n"
        for key, value in [
            ("database", database),
            ("snapshot", snapshot_id),
            ("created_unix_ms", int(time.time() * 1000)),
            ("length", len(data)),
        ]
    )
    descriptor += "".join(f"index {page.hex()}\n" for page in pages)
    export.descriptor = export.put_content("descriptors", descriptor.encode()).hex()
    head = (
        f"differential-head 2\ndatabase {database}\nbranch {branch}\nsnapshot {snapshot_id}\n"
        f"descriptor {export.descriptor}\nprevious {ZERO.hex()}\n"
    )
    export.put(f"heads/{database}/{branch}", head.encode())
    return export
