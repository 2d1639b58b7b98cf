"""Writes test/data/golden-format-1: a small repository of store format 1, kept forever so every
later build proves it still opens it. Run only when a new format version is released."""
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
from differential_testing import connect  # noqa: E402
from golden_fixture import fold_and_tidy  # noqa: E402

target = pathlib.Path(__file__).resolve().parent / "golden-format-1"
if target.exists():
    shutil.rmtree(target)
con = connect(target)
con.execute("ATTACH 'differential:golden' AS golden")
con.execute("CREATE TABLE golden.numbers AS SELECT range AS n, range * range AS sq, 'row ' || range AS label FROM range(20000)")
con.execute("CALL differential_create_snapshot('golden', name => 'first', author => 'format-1', message => 'twenty thousand rows')")
con.execute("DELETE FROM golden.numbers WHERE n % 3 = 0")
con.execute("CREATE VIEW golden.evens AS SELECT * FROM golden.numbers WHERE n % 2 = 0")
con.execute("CALL differential_create_snapshot('golden', name => 'second')")
con.execute("CALL differential_create_branch('golden', 'side', snapshot => 1)")
con.execute("ATTACH 'differential:golden' AS side (BRANCH 'side')")
con.execute("UPDATE side.numbers SET label = 'side' WHERE n < 10")
con.execute("DETACH side")
con.execute("INSERT INTO golden.numbers VALUES (-1, 1, 'uncheckpointed tail')")
con.close()
fold_and_tidy(target)
print(f"wrote {target}")
