"""Several processes share one repository: history written by one is read by the next."""
import pathlib

from differential_testing import run_python


def test_history_written_by_one_process_is_read_by_another(repository):
    run_python(
        "from differential_testing import connect\n"
        f"con = connect('{repository}')\n"
        "con.execute(\"ATTACH 'differential:events' AS ev\")\n"
        "con.execute('CREATE TABLE ev.e AS SELECT range AS id FROM range(5000)')\n"
        "con.execute(\"CALL differential_create_snapshot('ev', name => 'five-k', author => 'proc-1')\")\n"
        "con.execute('DELETE FROM ev.e WHERE id >= 1000')\n"
        "con.execute(\"CALL differential_create_snapshot('ev', name => 'one-k')\")\n"
        "con.execute('INSERT INTO ev.e VALUES (-1)')\n"
    )
    out = run_python(
        "from differential_testing import connect\n"
        f"con = connect('{repository}')\n"
        "con.execute(\"ATTACH 'differential:events' AS ev\")\n"
        "print(con.execute('SELECT count(*) FROM ev.e').fetchone()[0])\n"
        "print(con.execute('SELECT count(*) FROM ev.e AT (VERSION => 1)').fetchone()[0])\n"
        "print(con.execute('SELECT count(*) FROM ev.e AT (VERSION => 2)').fetchone()[0])\n"
        "print(con.execute('SELECT string_agg(snapshot_name || \\':\\' || coalesce(author, \\'-\\'), \\',\\' ORDER BY snapshot_id) FROM ev.snapshots()').fetchone()[0])\n"
    )
    assert out.split() == ["1001", "5000", "1000", "five-k:proc-1,one-k:-"]


def test_read_only_attachment_pairs_the_database_with_its_published_wal(repository):
    import subprocess
    import sys

    from differential_testing import REPO_ROOT, child_env, connect

    writer = subprocess.Popen(
        [sys.executable, "-u", "-c",
         "import sys\n"
         "from differential_testing import connect\n"
         f"con = connect({str(repository)!r})\n"
         "con.execute(\"ATTACH 'differential:live' AS live\")\n"
         "con.execute('CREATE TABLE live.t AS SELECT range AS x FROM range(1000)')\n"
         "con.execute('CHECKPOINT live')\n"
         "con.execute('INSERT INTO live.t SELECT range FROM range(1000, 1500)')\n"
         "print('ready', flush=True)\n"
         "sys.stdin.readline()\n"
         "con.execute('CHECKPOINT live')\n"
         "con.execute('INSERT INTO live.t SELECT range FROM range(1500, 1600)')\n"
         "print('moved', flush=True)\n"
         "sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=child_env(PYTHONPATH=str(REPO_ROOT / "test" / "python"), PATH="/usr/bin:/bin"),
    )
    assert writer.stdout.readline().strip() == "ready"
    reader = connect(repository)
    # The writer's last commit is only in its WAL: a read-only attachment replays it.
    reader.execute("ATTACH 'differential:live' AS live (READ_ONLY)")
    assert reader.execute("SELECT count(*) FROM live.t").fetchone()[0] == 1500
    writer.stdin.write("\n")
    writer.stdin.flush()
    assert writer.stdout.readline().strip() == "moved"
    # Still the state it attached to, though the writer checkpointed and wrote a new WAL since.
    assert reader.execute("SELECT count(*) FROM live.t").fetchone()[0] == 1500
    reader.execute("DETACH live")
    reader.execute("ATTACH 'differential:live' AS live (READ_ONLY)")
    assert reader.execute("SELECT count(*) FROM live.t").fetchone()[0] == 1600
    writer.stdin.write("\n")
    writer.stdin.flush()
    assert writer.wait() == 0


def test_processes_opening_a_new_repository_at_once_all_attach(tmp_path):
    """Two processes opening a brand-new repository race to switch its metadata file to WAL; SQLite tells the
    loser "busy" without waiting (waiting could deadlock). Before the retry, about 2 rounds in 5 failed one
    process with metadata_error; every process must attach and write."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1]))
    code = ("import sys\n"
            "from differential_testing import connect\n"
            "con = connect(sys.argv[1])\n"
            "con.execute(f\"ATTACH 'differential:db{sys.argv[2]}' AS d\")\n"
            "con.execute('CREATE TABLE d.t AS SELECT 1 AS x')\n"
            "print(con.execute('SELECT count(*) FROM d.t').fetchone()[0])\n")
    for round_number in range(20):
        repository = tmp_path / f"round{round_number}"
        repository.mkdir()
        processes = [subprocess.Popen([sys.executable, "-c", code, str(repository), str(i)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
        for process in processes:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, (round_number, err[-600:])
            assert out.split() == ["1"]
