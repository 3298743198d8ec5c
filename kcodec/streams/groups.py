"""Streams groups in ``__consumer_offsets``.

A Streams group is a classic group of protocol type ``consumer`` whose protocol (assignor)
is ``"stream"``: the member's ConsumerProtocolSubscription/Assignment carry
``SubscriptionInfo``/``AssignmentInfo`` in their ``userData``.

:func:`decode_member_metadata` decodes a ``GroupMetadataValue``'s members knowing the
protocol name.  :func:`register` plugs Streams into :mod:`kcodec.offsets` so that decoded
records (and ``kcodec offsets``) carry the Streams metadata: the decoder is registered for
protocol type ``consumer`` with protocol name ``stream`` only, wraps the consumer one and adds
``value["streams"]``; user data that is not valid Streams metadata is reported as the
member's decoding error.  Plain consumer groups are left alone.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

import kcodec

from kcodec.errors import DecodeError
from kcodec.offsets import Embedded, protocol_decoder, register_protocol_decoder

from .protocol import (ASSIGNOR_NAME, LATEST_SUPPORTED_VERSION, AssignmentInfo, SubscriptionInfo,
                       assignment_to_json, decode_assignment, decode_subscription, subscription_to_json)

__all__ = ["STREAMS_KEY", "register", "decode_member_metadata", "streams_user_data"]

STREAMS_KEY = "streams"     # key added to an Embedded value that holds Streams metadata


def _plausible_subscription(info: SubscriptionInfo) -> bool:
    if info.trailing:
        return False
    if info.future:
        return info.latest_supported_version >= info.version
    if info.version >= 3:
        return info.version <= info.latest_supported_version
    return True


def streams_user_data(kind: str, user_data: Optional[bytes], *,
                      strict: bool = True) -> Union[SubscriptionInfo, AssignmentInfo, None]:
    """Decode ``user_data`` of a subscription (``kind="subscription"``) or assignment.

    ``strict=False`` raises :class:`DecodeError` on bad bytes; ``strict=True`` (the
    sniffing mode used for protocol type ``consumer``) returns None unless every byte
    decodes as Streams metadata."""
    if user_data is None:
        if strict:
            return None
        raise DecodeError("null user data", message=kind)
    try:
        if kind == "subscription":
            info: Any = decode_subscription(user_data)
            ok = _plausible_subscription(info)
        else:
            info = decode_assignment(user_data)
            ok = not info.trailing and info.version <= LATEST_SUPPORTED_VERSION
    except DecodeError:
        if strict:
            return None
        raise
    return info if ok or not strict else None


def _wrap(base: Callable[[bytes], Embedded], kind: str) -> Callable[[bytes], Embedded]:
    def dec(data: bytes) -> Embedded:
        e = base(data)
        if e.value is None:
            return e
        try:
            info = streams_user_data(kind, e.value.get("userData"), strict=False)
        except DecodeError as err:
            return e._replace(value=None, error=f"Streams {kind} user data: {err}")
        return e._replace(value=dict(e.value, **{STREAMS_KEY: info}))
    dec.__wrapped__ = base  # type: ignore[attr-defined]
    return dec


def register() -> None:
    """Make :mod:`kcodec.offsets` decode Streams metadata in the members of classic groups
    of protocol type ``consumer`` whose protocol is ``stream`` (idempotent)."""
    if protocol_decoder("consumer", ASSIGNOR_NAME) is not protocol_decoder("consumer"):
        return
    cur = protocol_decoder("consumer")
    if cur is None:
        return
    register_protocol_decoder("consumer", _wrap(cur.subscription, "subscription"),
                              _wrap(cur.assignment, "assignment"), protocol_name=ASSIGNOR_NAME)


def decode_member_metadata(group_value: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The Streams view of a decoded ``GroupMetadataValue`` whose protocol is ``"stream"``:
    per member ``{"member_id", "subscription", "assignment"}`` in Kafka's decoded JSON form
    (None where the member has none).  Bad user data raises :class:`DecodeError`."""
    if group_value.get("protocol") != ASSIGNOR_NAME:
        raise ValueError(f"not a Streams group: protocol {group_value.get('protocol')!r}")
    out = []
    for m in group_value.get("members") or []:
        row: Dict[str, Any] = {"member_id": m.get("memberId"), "subscription": None, "assignment": None}
        for kind, schema in (("subscription", "ConsumerProtocolSubscription"),
                             ("assignment", "ConsumerProtocolAssignment")):
            raw = m.get(kind)
            if not raw:
                continue
            f = kcodec.read_framed(raw, message=schema, newer="latest", trailing="allow")
            ud = f.value.get("userData") if f.value else None  # type: ignore[union-attr]
            if ud is None:
                continue
            info = streams_user_data(kind, ud, strict=False)
            row[kind] = (subscription_to_json(info) if kind == "subscription"  # type: ignore[arg-type]
                         else assignment_to_json(info))  # type: ignore[arg-type]
        out.append(row)
    return out
