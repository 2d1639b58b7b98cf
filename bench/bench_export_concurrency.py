"""Export time of one TPC-H database to versitygw behind Toxiproxy's first-byte latency, by
differential_export_snapshot alone (the checkpoint and snapshot are taken before, with the store unreachable),
for several values of SET differential_export_concurrency. Each run starts from a copy of the same repository
and an empty prefix; the first run of a process also pays the conditional-write probe (13 requests). Usage: bench_export_concurrency.py <native tpch file> [--latency-ms 20] [--concurrency 1,4,8]"""
import argparse
import json
import pathlib
import shutil
import sys
import tempfile
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "test" / "python"))
from differential_testing import connect  # noqa: E402
from s3_server import VersityGW  # noqa: E402
from toxiproxy import Toxiproxy  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("native")
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="export-concurrency-"))
    server = VersityGW()
    proxy = Toxiproxy(server.port, args.latency_ms)
    try:
        bucket = server.create_bucket("bench")
        url = f"s3://{bucket}/lake/"
        secret = server.secret_sql(f"s3://{bucket}/").replace(server.endpoint, proxy.endpoint)
        seed = work / "seed"
        con = connect(seed)
        con.execute(secret)
        con.execute(f"ATTACH '{args.native}' AS native (READ_ONLY)")
        con.execute(f"ATTACH 'differential:tpch' AS tpch (DATA_PATH '{url}')")
        con.execute("COPY FROM DATABASE native TO tpch")
        proxy.cli("toggle", "s3")  # unreachable: the snapshot stays local and pending
        try:
            con.execute("CALL differential_create_snapshot('tpch')")
        except Exception as e:  # noqa: BLE001 - the expected export_failed
            assert "export_failed" in str(e), e
        proxy.cli("toggle", "s3")
        con.close()
        results = []
        for round_number in range(args.runs):
            for concurrency in [int(c) for c in args.concurrency.split(",")]:
                shutil.rmtree(server.bucket_path(bucket) / "lake", ignore_errors=True)
                # A path of its own per run: the extension keeps a repository open per path for the process.
                repository = work / f"run-{round_number}-{concurrency}"
                shutil.copytree(seed, repository)
                con = connect(repository)
                con.execute(secret)
                con.execute(f"SET differential_export_concurrency = {concurrency}")
                start = time.perf_counter()
                row = con.execute("SELECT packs_uploaded, bytes_uploaded, requests "
                                  "FROM differential_export_snapshot('tpch')").fetchone()
                seconds = time.perf_counter() - start
                con.close()
                results.append({"round": round_number, "concurrency": concurrency, "seconds": round(seconds, 3),
                                "packs": row[0], "bytes": row[1], "requests": row[2]})
                shutil.rmtree(repository)
                print(json.dumps(results[-1]), flush=True)
    finally:
        proxy.close()
        server.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
