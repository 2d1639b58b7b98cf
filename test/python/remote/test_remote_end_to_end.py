"""The whole read side against exports the extension itself made: a writer with a DATA_PATH snapshots, and a reader
without any repository attaches the branch head and each snapshot's descriptor and reads what the writer had."""
from differential_testing import connect


def descriptor_of(store, snapshot_id):
    record = (store.root / "commits" / "orders" / f"{snapshot_id:020d}").read_text().splitlines()
    return [line for line in record if line.startswith("descriptor ")][0].split(" ")[1]


def test_a_reader_attaches_what_the_writer_exported(store, tmp_path):
    writer = store.prepare(connect(tmp_path / "writer-repository"))
    writer.execute(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{store.url}')")
    writer.execute("CREATE TABLE orders.o AS SELECT range AS id, range % 97 AS v FROM range(400000)")
    writer.execute("CALL differential_create_snapshot('orders', name => 'first')")
    first = writer.execute("SELECT count(*), sum(v) FROM orders.o").fetchall()
    writer.execute("DELETE FROM orders.o WHERE id % 3 = 0")
    writer.execute("CREATE TABLE orders.extra AS SELECT 'x' AS s")
    writer.execute("CALL differential_create_snapshot('orders')")
    second = writer.execute("SELECT count(*), sum(v) FROM orders.o").fetchall()
    assert first != second

    reader = store.prepare(connect())  # no repository at all
    reader.execute(f"ATTACH 'differential:{store.url}heads/orders/main' AS latest")
    reader.execute(f"ATTACH 'differential:{store.url}descriptors/{descriptor_of(store, 1)}' AS v1")
    reader.execute(f"ATTACH 'differential:{store.url}descriptors/{descriptor_of(store, 2)}' AS v2")
    assert reader.execute("SELECT count(*), sum(v) FROM latest.o").fetchall() == second
    assert reader.execute("SELECT count(*), sum(v) FROM v2.o").fetchall() == second
    assert reader.execute("SELECT count(*), sum(v) FROM v1.o").fetchall() == first
    assert reader.execute("SELECT * FROM latest.extra").fetchall() == [("x",)]
    # The same answers the writer's own time travel gives.
    assert writer.execute("SELECT count(*), sum(v) FROM orders.o AT (VERSION => 1)").fetchall() == first
