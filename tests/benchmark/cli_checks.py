"""Checks shared by the command-line tests (imported by them; pytest puts this folder on sys.path).

`exit_2_one_line` is the bad-input rule — exit 2 and exactly one short `error:` line on stderr —,
`snapshot` fingerprints a folder so a test can prove the user's files did not change, and `sql` /
`parent_statuses` / `all_statuses` read an MLflow SQLite store with plain sqlite3.
"""

import hashlib
import sqlite3

from benchmark.cli import main


def exit_2_one_line(capsys, argv, *fragments) -> str:
    """Run `benchmark ARGV`: exit 2, one `error:` line (under 1,000 characters) holding every fragment; the line."""
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    for fragment in fragments:
        assert fragment in err[0], err[0]
    assert len(err[0]) < 1000, len(err[0])
    return err[0]


def snapshot(folder):
    """{relative path: sha256} of every file under `folder` (hidden ones included)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def sql(db, query, *args):
    """The rows of `query` on the SQLite file `db` (committed; the connection closed)."""
    with sqlite3.connect(db) as con:
        rows = con.execute(query, args).fetchall()
    con.close()
    return rows


def parent_statuses(db):
    """Status counts of the store's task invocations (parent runs; their children end with them)."""
    return dict(sql(db, "SELECT status, COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM tags t WHERE "
                        "t.run_uuid = r.run_uuid AND t.key = 'mlflow.parentRunId') GROUP BY status"))


def all_statuses(db):
    """Status counts of every run of the store, children included."""
    return dict(sql(db, "SELECT status, COUNT(*) FROM runs GROUP BY status"))
