"""Fleet-wide assignor what-ifs: run kcodec's assignors over every classic consumer group
of a ``__consumer_offsets`` read at once (one ``groupBy(group).applyInPandas`` task per
group), e.g. "if every group moved to cooperative-sticky, how many partitions would move?"
"""
from __future__ import annotations

from typing import Any, Iterable, List, Sequence

__all__ = ["assignor_whatif", "WHATIF_SCHEMA"]

WHATIF_SCHEMA = ("group string, protocol string, generation int, strategy string, members int, "
                 "partitions int, partitions_moved int, rounds int, unassigned int, notes string, "
                 "error string")


def _run(strategies: Sequence[str], active: bool) -> Any:
    def run(pdf: Any) -> Any:
        import pandas as pd
        from kcodec.consumer.whatif import load_scenario, what_if
        from kcodec.errors import KcodecError
        from kcodec.offsets import decode_record
        rows: List[dict] = []
        pdf = pdf.sort_values(["partition", "offset"])
        chosen = None
        for key, value in zip(pdf["key"], pdf["value"]):
            rec = decode_record(bytes(key), None if value is None else bytes(value), errors="report")
            if rec.tombstone:
                chosen = None         # the group was deleted
            elif rec.error or not active or (rec.value or {}).get("members"):
                chosen = rec
        if chosen is not None:
            rec = chosen
            g = rec.value or {}
            base = {"group": rec.group_id, "protocol": g.get("protocol"), "generation": g.get("generation")}
            if rec.error:
                rows.append({**base, "error": rec.error})
            elif g.get("protocolType") == "consumer" and g.get("members"):
                for strat in strategies:
                    try:
                        sc = load_scenario({"group": g}, strat)
                        d = what_if(sc, strat).to_dict()
                    except (KcodecError, ValueError, TypeError) as e:
                        rows.append({**base, "strategy": strat, "error": str(e)})
                        continue
                    rows.append({**base, "strategy": strat, "members": d["members"],
                                 "partitions": d["partitions"], "partitions_moved": d["partitions_moved"],
                                 "rounds": d.get("plan", {}).get("rounds", 1), "unassigned": d["unassigned"],
                                 "notes": "; ".join(d["notes"]) or None, "error": None})
        cols = [c.split()[0] for c in WHATIF_SCHEMA.split(", ")]
        out = pd.DataFrame(rows, columns=cols)
        for c in ("generation", "members", "partitions", "partitions_moved", "rounds", "unassigned"):
            out[c] = out[c].astype("Int32")
        return out
    return run


def assignor_whatif(df: Any, strategies: Iterable[str] = ("cooperative-sticky",), *,
                    key: str = "key", value: str = "value", active: bool = False) -> Any:
    """For every classic consumer group in ``df`` (raw ``__consumer_offsets`` records: a
    Kafka-source read or :func:`kcodec.spark.read_log`, with ``partition`` and ``offset``
    columns giving log order), take its latest ``GroupMetadataValue`` (``active=True``:
    the latest one with members) and run each of ``strategies`` (``range``,
    ``roundrobin``, ``sticky``, ``cooperative-sticky``) over its members, who own their
    current assignment.  One row per group and strategy: ``partitions_moved``
    (partitions whose owner changes), ``rounds`` (2 when a cooperative rebalance must
    revoke first), ``unassigned``; ``error`` for a group whose record does not decode.
    Groups without members (or of other protocol types) give no row."""
    from pyspark.sql import functions as F
    from .functions import from_consumer_offsets
    strategies = list(strategies)
    d = (df.select(F.col(key).alias("key"), F.col(value).alias("value"), "partition", "offset")
         # record type 2 (GroupMetadata): the int16 prefix, without decoding other records
         .where(F.substring(F.col("key"), 1, 2) == F.lit(bytes([0, 2])))
         .withColumn("group", from_consumer_offsets("key", F.lit(None).cast("binary"))["group"]))
    return d.groupBy("group").applyInPandas(_run(strategies, active), WHATIF_SCHEMA)
