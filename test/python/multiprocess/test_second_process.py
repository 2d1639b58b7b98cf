"""Several processes share one repository: history written by one is read by the next."""
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
