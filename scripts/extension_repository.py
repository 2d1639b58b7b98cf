"""Reads and writes the metadata footer of a .duckdb_extension file, and publishes a built extension into a
DuckDB extension repository laid out as <repository>/<duckdb version>/<platform>/<name>.duckdb_extension.gz.

The layout is the one DuckDB's INSTALL ... FROM '<repository>' looks for (ExtensionUrlTemplate in DuckDB's
extension_install.cpp): the version directory and the platform are taken from the file's own footer, so a
repository can never name a version or platform the file was not built for.
"""
import argparse
import gzip
import os
import pathlib
import sys

# The footer DuckDB appends to every loadable extension (scripts/append_metadata.cmake in the DuckDB sources):
# eight 32-byte fields, written last field first, then a 256-byte signature (zeros when unsigned).
FIELD_SIZE = 32
FIELD_COUNT = 8
SIGNATURE_SIZE = 256
FOOTER_SIZE = FIELD_COUNT * FIELD_SIZE + SIGNATURE_SIZE
MAGIC = b"4"
# Field numbers as DuckDB names them (META1 .. META5); 6 to 8 are unused and stay zero.
FIELDS = {"magic": 1, "platform": 2, "duckdb_version": 3, "extension_version": 4, "abi_type": 5}


def _field_offset(number):
    """Offset of field `number` inside the footer: field 8 comes first, field 1 last before the signature."""
    return (FIELD_COUNT - number) * FIELD_SIZE


def read_footer(path):
    """The footer's fields as strings; raises ValueError when the file carries no DuckDB extension footer."""
    data = pathlib.Path(path).read_bytes()
    if len(data) < FOOTER_SIZE:
        raise ValueError(f"{path} is too small to be a DuckDB extension")
    footer = data[-FOOTER_SIZE:]
    fields = {}
    for name, number in FIELDS.items():
        raw = footer[_field_offset(number) : _field_offset(number) + FIELD_SIZE]
        fields[name] = raw.rstrip(b"\0").decode("utf-8")
    if fields["magic"] != MAGIC.decode():
        raise ValueError(f"{path} has no DuckDB extension footer (magic field {fields['magic']!r})")
    return fields


def rewrite_footer(source, target, **values):
    """Copies source to target with the named footer fields replaced (unsigned files only: a signature would no
    longer match, which is the point of the signature)."""
    data = bytearray(pathlib.Path(source).read_bytes())
    read_footer(source)  # refuses a file that is not an extension
    start = len(data) - FOOTER_SIZE
    for name, value in values.items():
        encoded = value.encode("utf-8")
        if len(encoded) > FIELD_SIZE:
            raise ValueError(f"footer field {name} holds at most {FIELD_SIZE} bytes")
        offset = start + _field_offset(FIELDS[name])
        data[offset : offset + FIELD_SIZE] = encoded.ljust(FIELD_SIZE, b"\0")
    pathlib.Path(target).write_bytes(bytes(data))


def repository_path(repository, extension):
    """Where DuckDB looks for this file inside a repository, from the file's own footer."""
    fields = read_footer(extension)
    name = pathlib.Path(extension).name
    if not name.endswith(".duckdb_extension"):
        raise ValueError(f"{extension}: DuckDB only installs files named <name>.duckdb_extension")
    return pathlib.Path(repository) / fields["duckdb_version"] / fields["platform"] / (name + ".gz")


def publish(extension, repository):
    """Writes the gzipped extension into the repository, atomically (a reader sees the old file or the new one)."""
    target = repository_path(repository, extension)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    # mtime=0 keeps the archive byte-identical across rebuilds of the same file (and so its ETag on a web server).
    with open(extension, "rb") as source, open(temporary, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as compressed:
            compressed.write(source.read())
        raw.flush()
        os.fsync(raw.fileno())
    os.replace(temporary, target)
    return target


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("footer", help="print the footer fields of an extension file")
    show.add_argument("extension")
    put = commands.add_parser("publish", help="publish an extension file into a repository directory")
    put.add_argument("extension")
    put.add_argument("repository")
    args = parser.parse_args(argv)
    if args.command == "footer":
        for name, value in read_footer(args.extension).items():
            print(f"{name}\t{value}")
    else:
        print(publish(args.extension, args.repository))


if __name__ == "__main__":
    main(sys.argv[1:])
