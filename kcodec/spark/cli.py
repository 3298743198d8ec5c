"""``kcodec analyze``: the Spark job on the command line (registered by ``kcodec.cli``).

Imports nothing heavy until run, so ``kcodec --help`` works without the ``spark`` extra.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_subparsers", "cmd_analyze"]


def cmd_analyze(args: argparse.Namespace) -> int:
    try:
        import pyspark  # noqa: F401
        import rich  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"kcodec analyze needs the spark extra (pip install 'kcodec[spark]'): {e}")
    from pyspark.sql import SparkSession
    from .analyze import analyze, print_summary, write_report
    builder = (SparkSession.builder.appName("kcodec analyze")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if args.master:
        builder = builder.master(args.master)
    if (not args.master or args.master.startswith("local")) and "PYSPARK_PYTHON" not in os.environ:
        # on this machine the Python workers must be this interpreter, the one with kcodec
        builder = builder.config("spark.pyspark.python", sys.executable)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        a = analyze(spark, args.path, args.out, downgrade_to=args.downgrade_to,
                    progress=not args.no_progress and sys.stderr.isatty())
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
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--strict", action="store_true", help="exit 1 when anything was flagged")
    p.add_argument("--keep-session", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_analyze)
