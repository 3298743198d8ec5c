"""``kcodec analyze``: the Spark job on the command line (registered by ``kcodec.cli``).

Imports nothing heavy until run, so ``kcodec --help`` works without the ``spark`` extra.
"""
from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_subparsers", "cmd_analyze"]


def cmd_analyze(args: argparse.Namespace) -> int:
    try:
        import pyspark  # noqa: F401
        import rich  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"kcodec analyze needs the spark extra (pip install 'kcodec[spark]'): {e}")
    from ._session import session
    from .analyze import analyze, print_summary, write_report
    conf = {"spark.sql.shuffle.partitions": str(args.shuffle_partitions),
            "spark.sql.execution.arrow.pyspark.enabled": "true"}
    # workers on this interpreter (however kcodec was started), Spark's logs off the console
    spark = session("kcodec analyze", args.master or None, conf)
    try:
        a = analyze(spark, args.path, args.out, downgrade_to=args.downgrade_to, progress=args.progress)
    finally:
        if not args.keep_session:
            spark.stop()
    print_summary(a)
    if args.report:
        write_report(a, args.report)
        print(f"report: {args.report}")
    return 1 if args.strict and (a.flagged or a.corrupt_batches or a.errors) else 0


def add_subparsers(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "analyze", help="analyse __consumer_offsets history on Spark (Parquet tables, summary, HTML report)",
        description="Decode __consumer_offsets segment directories (or a Parquet/JSON dump of a Spark "
                    "Kafka-source read) on Spark, fold group state as `kcodec offsets groups` does, write "
                    "Parquet tables and print a summary. Without PATH: the bundled sample of real broker "
                    "data. Needs the spark extra.")
    p.add_argument("path", nargs="?", help="segment directory / file, or *.parquet / *.json dump (any "
                                          "path Spark reads); default: the bundled sample")
    p.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*]); empty to "
                                                         "take spark-submit's")
    p.add_argument("--out", help="directory for the Parquet tables (records, committed_offsets, groups, "
                                 "members, flagged, partitions)")
    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report with charts")
    p.add_argument("--downgrade-to", metavar="VERSION", help="also list downgrade blockers for this Kafka "
                                                            "release (e.g. 3.9; local segment paths)")
    p.add_argument("--shuffle-partitions", type=int, default=8, help="spark.sql.shuffle.partitions (default 8)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress on stderr (default: when stderr is a terminal; plain lines "
                        "when it is not and --progress is given)")
    p.add_argument("--strict", action="store_true", help="exit 1 when anything was flagged")
    p.add_argument("--keep-session", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_analyze)
