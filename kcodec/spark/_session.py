"""The SparkSession kcodec builds (``kcodec analyze``, the benches, the tests): one place
that makes it work however the program was started.

* **Python workers run this interpreter.**  PySpark 4 starts its workers with
  ``PYSPARK_PYTHON`` (else ``python3`` from ``PATH``), read when the SparkContext is
  created; ``.config("spark.pyspark.python", ...)`` on a session started from Python
  does not reach them.  A venv that is not activated (``venv/bin/kcodec``, pipx, cron,
  systemd, an IDE) then gets workers without kcodec.  :func:`use_this_python` sets
  ``PYSPARK_PYTHON`` to ``sys.executable`` before the JVM starts, unless the user chose
  an interpreter (``PYSPARK_PYTHON``, or ``spark.pyspark.python`` given to
  :func:`session`, which it then passes on the same way).
* **A quiet console.**  Spark's INFO/WARN lines go nowhere near the user's terminal: the
  JVM is started with kcodec's log4j2 configuration (errors only, on stderr) and without
  Spark's console progress bar, unless the user configured logging themselves.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional

__all__ = ["use_this_python", "session", "LOG4J2_CONFIG"]

LOG4J2_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")


def use_this_python(conf: Optional[Dict[str, str]] = None) -> str:
    """Make PySpark's Python workers (and a local driver's) run ``sys.executable``
    unless an interpreter was chosen; returns the one the workers will run.  Call it
    before the first SparkSession/SparkContext of the process is created."""
    chosen = (conf or {}).get("spark.pyspark.python")
    if chosen:
        os.environ["PYSPARK_PYTHON"] = chosen
    elif not os.environ.get("PYSPARK_PYTHON"):
        os.environ["PYSPARK_PYTHON"] = sys.executable
    return os.environ["PYSPARK_PYTHON"]


def _java_options(conf: Dict[str, str], key: str) -> None:
    opts = conf.get(key, "")
    if "log4j2.configurationFile" not in opts and "log4j.configuration" not in opts:
        conf[key] = (opts + " " if opts else "") + f"-Dlog4j2.configurationFile=file:{LOG4J2_CONFIG}"


def session(app_name: str = "kcodec", master: Optional[str] = None,
            conf: Optional[Dict[str, str]] = None, *, quiet: bool = True) -> Any:
    """``SparkSession.builder...getOrCreate()`` with the workers on this interpreter
    (:func:`use_this_python`) and, with ``quiet``, Spark's log lines kept off the console.
    ``master`` None or empty: the one spark-submit or ``spark-defaults.conf`` gives
    (``local[*]`` when there is none)."""
    from pyspark.sql import SparkSession
    conf = dict(conf or {})
    use_this_python(conf)
    conf.setdefault("spark.ui.showConsoleProgress", "false")
    if quiet and not os.environ.get("SPARK_CONF_DIR"):
        # the driver JVM is launched by this process only when no gateway exists yet
        _java_options(conf, "spark.driver.extraJavaOptions")
    b = SparkSession.builder.appName(app_name)
    if master:
        b = b.master(master)
    for k, v in conf.items():
        b = b.config(k, v)
    s = b.getOrCreate()
    if quiet:
        s.sparkContext.setLogLevel("ERROR")
    return s
