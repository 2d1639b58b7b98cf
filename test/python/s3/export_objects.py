"""Reads an export as it lies in a directory (a file:// DATA_PATH, or versitygw's posix bucket directory),
so tests can check that every head points at complete, verified objects."""
import hashlib
import pathlib
import struct


def text_object(path):
    """The `key value` lines of a text object after its header line, as a dict of lists."""
    lines = pathlib.Path(path).read_text().splitlines()
    values = {}
    for line in lines[1:]:
        key, _, value = line.partition(" ")
        values.setdefault(key, []).append(value)
    return lines[0], values


def index_slots(blob):
    assert blob[:8] == b"DIFXIDX2", blob[:8]
    (count,) = struct.unpack_from("<I", blob, 8)
    assert len(blob) == 16 + count * 76
    for i in range(count):
        at = 16 + i * 76
        chunk, pack = blob[at:at + 32], blob[at + 32:at + 64]
        offset, length = struct.unpack_from("<QI", blob, at + 64)
        yield chunk, pack, offset, length


def check_descriptor(root, descriptor_hex):
    """Checks a descriptor and everything it reaches; returns (database file length, chunk count)."""
    root = pathlib.Path(root)
    descriptor = root / "descriptors" / descriptor_hex
    assert hashlib.sha256(descriptor.read_bytes()).hexdigest() == descriptor_hex
    header, values = text_object(descriptor)
    assert header == "differential-descriptor 2", header
    chunks = 0
    for page_hex in values.get("index", []):
        page = (root / "indexes" / page_hex).read_bytes()
        assert hashlib.sha256(page).hexdigest() == page_hex
        for chunk, pack, offset, length in index_slots(page):
            if chunk == bytes(32):
                continue
            pack_bytes = (root / "packs" / pack.hex()).read_bytes()
            assert hashlib.sha256(pack_bytes).hexdigest() == pack.hex()
            assert len(pack_bytes) <= 8 << 20
            assert hashlib.sha256(pack_bytes[offset:offset + length]).digest() == chunk
            chunks += 1
    return int(values["length"][0]), chunks


def check_head(root, database, branch="main"):
    """Checks that the head exists and reaches only complete objects; returns its snapshot id."""
    root = pathlib.Path(root)
    header, values = text_object(root / "heads" / database / branch)
    assert header == "differential-head 2", header
    snapshot = int(values["snapshot"][0])
    descriptor = values["descriptor"][0]
    commit = root / "commits" / database / f"{snapshot:020d}"
    _, record = text_object(commit)
    assert record["descriptor"] == [descriptor]
    check_descriptor(root, descriptor)
    return snapshot


def count(root, kind):
    directory = pathlib.Path(root) / kind
    return sum(1 for p in directory.rglob("*") if p.is_file()) if directory.exists() else 0
