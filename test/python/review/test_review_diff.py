"""The REST diff over the extension's differential_diff: keyless tables, refusals, and the Arrow stream's batches."""
from conftest import refused, unchanged


def test_a_table_without_primary_key_diffs_by_whole_row(world):
    assert world.create("mia", "log").status_code == 201
    world.sql("mia", "CREATE TABLE events (seq INTEGER, what VARCHAR)", branch="log")
    world.sql("mia", "INSERT INTO events VALUES (1, 'a'), (2, 'b')", branch="log")
    page = world.call("max", "GET", "/api/branch/shop/branches/log/diff/events").json()
    assert [(r["op"], r["key"]) for r in page["rows"]] == [("insert", {"seq": 1, "what": "a"}),
                                                         ("insert", {"seq": 2, "what": "b"})]
    assert page["total"] == 2 and page["primary_key"] == ["seq", "what"]


def test_diff_refusals_are_documented_codes(world):
    assert world.create("mia", "rekey").status_code == 201
    world.sql("mia", "DROP TABLE customers", branch="rekey")
    world.sql("mia", "CREATE TABLE customers (id INTEGER, name VARCHAR PRIMARY KEY, city VARCHAR)", branch="rekey")
    with unchanged(world):
        refused(world.call("max", "GET", "/api/branch/shop/branches/rekey/diff/customers"), 422, "diff_unsupported")
        refused(world.call("max", "GET", "/api/branch/shop/branches/rekey/diff/nope"), 404, "table_not_found")
        refused(world.client.get("/api/branch/shop/branches/rekey/diff/nope",
                                 headers={**world.h("max"), "Accept": "application/vnd.apache.arrow.stream"}),
                404, "table_not_found")


def test_the_arrow_stream_arrives_in_batches(world):
    import pyarrow as pa
    world.create("mia", "wide")
    world.sql("mia", "INSERT INTO items SELECT i, 'n', i, 's' FROM range(100, 30100) t(i)", branch="wide")
    with world.client.stream("GET", "/api/branch/shop/branches/wide/diff/items",
                             headers={**world.h("max"), "Accept": "application/vnd.apache.arrow.stream"}) as response:
        assert response.status_code == 200
        parts = list(response.iter_raw())
    reader = pa.ipc.open_stream(b"".join(parts))
    batches = list(reader)
    assert sum(b.num_rows for b in batches) == 30000 and len(batches) >= 3
