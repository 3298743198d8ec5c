"""``kcodec analyze``: the Spark job on the command line (registered by ``kcodec.cli``).

Imports nothing heavy until run, so ``kcodec --help`` works without the ``spark`` extra.
"""
from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["add_subparsers", "cmd_analyze"]


def _check_arguments(args: argparse.Namespace) -> None:
    """Everything that can be checked without Spark, before it starts: a local path
    exists and holds segment files (or is a Parquet/JSON dump), the options make sense."""
    from kcodec.cli import input_files
    from kcodec.errors import InputPathError, InvalidArgumentError
    if args.shuffle_partitions < 1:
        raise InvalidArgumentError("--shuffle-partitions", f"must be at least 1, got {args.shuffle_partitions}")
    if args.downgrade_to:
        from kcodec.offsets.downgrade import parse_target
        try:
            parse_target(args.downgrade_to)
        except ValueError as e:
            raise InvalidArgumentError("--downgrade-to", str(e)) from None
    if args.metadata and "://" not in args.metadata:
        input_files([args.metadata])
    path = args.path
    if path is None or "://" in path:       # the bundled sample; a URL only Spark can check
        return
    if path.rstrip("/").lower().endswith((".parquet", ".json", ".jsonl")):
        if not os.path.exists(path):
            raise InputPathError(path, "no such file or directory")
        return
    input_files([path])
    if os.path.isdir(path):
        # a broker's log dir: the job reads __consumer_offsets and __cluster_metadata only
        from kcodec.cli import _partitions_text
        from kcodec.log import OFFSETS_TOPIC, list_log_files
        from .analyze import is_metadata_dir
        files, other = list_log_files(path, topic=OFFSETS_TOPIC)
        if not files and not args.metadata and not any(is_metadata_dir(d) for d in other):
            raise InputPathError(path, "no __consumer_offsets or __cluster_metadata partitions in this "
                                       f"directory, only {_partitions_text(other)}")


def cmd_analyze(args: argparse.Namespace) -> int:
    _check_arguments(args)
    try:
        import pyspark  # noqa: F401
        import rich  # noqa: F401
        if args.report:
            import plotly  # noqa: F401  (the report's charts)
    except ImportError as e:
        raise SystemExit(f"kcodec analyze needs the spark extra (pip install '.[spark]' in a checkout, or the wheel with [spark]): {e}")
    from ._session import session
    from .analyze import analyze, print_summary, write_report
    conf = {"spark.sql.shuffle.partitions": str(args.shuffle_partitions),
            "spark.sql.execution.arrow.pyspark.enabled": "true"}
    # workers on this interpreter (however kcodec was started), Spark's logs off the console
    spark = session("kcodec analyze", args.master or None, conf)
    try:
        a = analyze(spark, args.path, args.out, downgrade_to=args.downgrade_to, progress=args.progress,
                    metadata=args.metadata)
    finally:
        if not args.keep_session:
            spark.stop()
    if a.left_out:
        import sys
        from kcodec.cli import _partitions_text
        print("kcodec analyze: reading only __consumer_offsets and __cluster_metadata partitions; "
              f"left out {_partitions_text(a.left_out)}", file=sys.stderr)
    print_summary(a)
    if args.report:
        write_report(a, args.report)
        print(f"report: {args.report}")
    from kcodec.cli import EXIT_DATA, EXIT_OK
    # corrupt batches and records that did not decode: 3, as the offsets commands; with
    # --strict also records flagged for an unknown type or a newer version
    if a.corrupt_batches or a.errors or (args.strict and a.flagged):
        return EXIT_DATA
    return EXIT_OK


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
    p.add_argument("--metadata", metavar="PATH", help="a __cluster_metadata tree whose history (topics, "
                                                       "leaders and ISRs, brokers, feature levels) to add; "
                                                       "found by itself under PATH")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress on stderr (default: when stderr is a terminal; plain lines "
                        "when it is not and --progress is given)")
    p.add_argument("--strict", action="store_true", help="exit 3 also when records were flagged for an unknown type or a "
                                                          "newer version (corrupt batches and records that do "
                                                          "not decode always exit 3)")
    p.add_argument("--keep-session", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_analyze)
