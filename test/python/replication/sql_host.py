"""One "host" of the shared-writer tests: a separate OS process with its own repository that runs the SQL it reads
from stdin (one JSON string per line) and answers each with one JSON line: {"rows": [...]} or {"error": "..."}."""
import json
import sys

from differential_testing import connect


def main(repository, setup_sql):
    con = connect(repository)
    con.execute(setup_sql)
    for line in sys.stdin:
        sql = json.loads(line)
        try:
            rows = con.execute(sql).fetchall()
            answer = {"rows": [[v if isinstance(v, (int, float, str, type(None))) else str(v) for v in r]
                               for r in rows]}
        except Exception as e:  # noqa: BLE001 - the test asserts on the error text it sends back
            answer = {"error": str(e)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
