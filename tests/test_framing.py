"""The core framing API: headers, primitives, Kafka's newer-version rule, error offsets."""
import uuid

import pytest

import kcodec
from kcodec.errors import DecodeError, EncodeError, KcodecError, UnsupportedVersionError
from kcodec.framing import (INT16_VERSION, KRAFT_RECORD, Reader, VersionPrefix, Writer,
                            read_framed, write_framed)


def test_int16_version_round_trip_and_offsets():
    data = write_framed(INT16_VERSION, "OffsetCommitValue", {"offset": 7, "metadata": "m"}, 3)
    assert data[:2] == b"\x00\x03"
    f = read_framed(data, INT16_VERSION, "OffsetCommitValue")
    assert (f.version, f.parsed_version, f.value["offset"], f.size) == (3, 3, 7, len(data))
    with pytest.raises(DecodeError) as e:
        read_framed(data[:-3], INT16_VERSION, "OffsetCommitValue")
    assert e.value.path == "commitTimestamp" and e.value.offset == len(data) - 8
    with pytest.raises(DecodeError) as e:
        read_framed(b"\xff\xfe" + data[2:], INT16_VERSION, "OffsetCommitValue")
    assert e.value.path == "version" and e.value.offset == 0
    with pytest.raises(DecodeError):
        read_framed(b"\x00", INT16_VERSION)


def test_newer_versions_follow_kafka():
    body = kcodec.encode("OffsetCommitValue", {"offset": 1}, 4)
    data = b"\x00\x09" + body + b"future"
    with pytest.raises(UnsupportedVersionError):
        read_framed(data, INT16_VERSION, "OffsetCommitValue")
    f = read_framed(data, INT16_VERSION, "OffsetCommitValue", newer="latest", trailing="allow")
    assert f.newer_than_known and (f.version, f.parsed_version) == (9, 4)
    assert f.trailing == b"future" and f.size == 2 + len(body)


def test_kraft_record_frame():
    data = write_framed(KRAFT_RECORD, "TopicRecord", {"name": "t", "topicId": uuid.UUID(int=5)}, 0,
                        api_key=2)
    assert data[:3] == b"\x01\x02\x00"          # frame version 1, TopicRecord, version 0
    f = read_framed(data, KRAFT_RECORD, lambda h: {2: "TopicRecord"}.get(h.api_key))
    assert f.header.api_key == 2 and f.value["name"] == "t" and f.size == len(data)
    assert read_framed(data, KRAFT_RECORD).value is None
    with pytest.raises(DecodeError, match="frame version"):
        read_framed(b"\x00" + data[1:], KRAFT_RECORD)


def test_in_body_version_with_latest_supported():
    frame = VersionPrefix("int32-in-body", 4, in_body=True, latest_supported_from=3)
    h = frame.read(Reader(b"\x00\x00\x00\x0b\x00\x00\x00\x0c rest"))
    assert (h.version, h.latest_supported, h.size) == (11, 12, 0)
    assert frame.read(Reader(b"\x00\x00\x00\x02")).latest_supported is None


def test_primitives_round_trip():
    w = Writer().int8(-1).int16(-2).int32(-3).int64(-4).uint16(65535).uint32(2**32 - 1)
    w.uvarint(300).varint(-150).varlong(-(2**40)).bytes32(None).bytes32(b"ab")
    w.string16(None).string16("héllo").java_utf("a\x00b\U0001F600").uuid(uuid.UUID(int=7))
    r = Reader(w.getvalue())
    assert [r.int8(), r.int16(), r.int32(), r.int64(), r.uint16(), r.uint32()] == \
        [-1, -2, -3, -4, 65535, 2**32 - 1]
    assert [r.uvarint(), r.varint(), r.varlong()] == [300, -150, -(2**40)]
    assert [r.bytes32(), r.bytes32(), r.string16(), r.string16()] == [None, b"ab", None, "héllo"]
    assert r.java_utf() == "a\x00b\U0001F600" and r.uuid() == uuid.UUID(int=7) and r.remaining == 0


def test_java_modified_utf8_is_exact():
    # Java's writeUTF: NUL as C0 80, a supplementary character as two 3-byte surrogates
    assert Writer().java_utf("\x00\U0001F600").getvalue() == bytes.fromhex("0008c080eda0bdedb880")
    with pytest.raises(DecodeError, match="modified UTF-8"):
        Reader(b"\x00\x04\xf0\x9f\x98\x80").java_utf("name")
    # a lone surrogate is accepted (Java's readUTF does) and written back the same way
    lone = Reader(b"\x00\x03\xed\xa0\xbd").java_utf()
    assert lone == "\ud83d" and Writer().java_utf(lone).getvalue() == b"\x00\x03\xed\xa0\xbd"


def test_reader_errors_name_path_and_offset():
    r = Reader(b"\x00\x01\x00\x00\x00\x09abc", 1, message="M", version=2)
    assert r.int8("a") == 1
    with pytest.raises(DecodeError) as e:
        r.bytes32("b")
    assert (e.value.path, e.value.offset, e.value.message) == ("b", 6, "M")
    with pytest.raises(DecodeError, match="too long"):
        Reader(b"\xff" * 6).uvarint("v")
    with pytest.raises(DecodeError, match="truncated"):
        Reader(b"\xff").uvarint("v")
    with pytest.raises(EncodeError):
        Writer().int16(70000, "x")
    with pytest.raises(EncodeError):
        Writer().uvarint(-1)


def _outcome(data, *args, **kw):
    try:
        return read_framed(data, *args, **kw)
    except KcodecError as e:
        return (type(e), str(e), e.path, e.offset, e.version)


@pytest.mark.parametrize("newer", ["error", "latest"])
@pytest.mark.parametrize("trailing", ["error", "allow"])
def test_bytes_take_the_short_path_with_the_same_results(newer, trailing):
    # bytes are read without a Reader; every other buffer type goes the general way:
    # both must give the same Framed, or the same error, field path and byte offset
    good = write_framed(INT16_VERSION, "OffsetCommitValue", {"offset": 7, "metadata": "m"}, 3)
    cases = [good, good + b"xy", good[:-3], b"", b"\x00", b"\xff\xfe" + good[2:], b"\x00\x09" + good[2:],
             b"\x7f\xff" + good[2:], b"\x00\x00" + good[2:]]
    for data in cases:
        for msg in ("OffsetCommitValue", lambda h: "OffsetCommitValue", lambda h: None):
            for offset in (0, 1):
                want = _outcome(bytearray(data), INT16_VERSION, msg, newer=newer, trailing=trailing,
                                offset=offset)
                got = _outcome(data, INT16_VERSION, msg, newer=newer, trailing=trailing, offset=offset)
                assert got == want
                assert _outcome(memoryview(data), INT16_VERSION, msg, newer=newer,
                                trailing=trailing, offset=offset) == want
