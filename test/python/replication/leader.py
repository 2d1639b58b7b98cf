"""A leader in its own OS process for the follower tests: reads one SQL statement per line on stdin, runs it and
answers one JSON line ({"rows": ...} or {"error": ...}). Credentials arrive on stdin, never on a command line."""
import json
import sys

import duckdb

from differential_testing import EXTENSION


def main():
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    for line in sys.stdin:
        try:
            rows = con.execute(json.loads(line)).fetchall()
            answer = {"rows": [list(map(str, row)) for row in rows]}
        except duckdb.Error as error:
            answer = {"error": str(error)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
