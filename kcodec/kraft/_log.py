"""The one place kcodec.kraft imports the record-batch reader (``kcodec.log``, or its
predecessor ``kcodec.records`` with the same public names)."""
try:
    from kcodec import log  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - until the log package lands
    from kcodec import records as log  # type: ignore[no-redef]

__all__ = ["log"]
