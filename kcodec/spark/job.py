"""``spark-submit`` entry point for ``kcodec analyze``:

    spark-submit [spark options] .../kcodec/spark/job.py [PATH] [--out DIR] [--report FILE.html]

The master comes from spark-submit (``--master`` of ``kcodec analyze`` is left empty).
"""
import sys

from kcodec.cli import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if not any(a == "--master" or a.startswith("--master=") for a in args):
        args = ["--master", ""] + args
    sys.exit(main(["analyze"] + args))
