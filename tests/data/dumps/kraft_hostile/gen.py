"""How 00000000000000000000.log here was made (kafka-dump-log.txt: Kafka 4.1.1's
``kafka-dump-log.sh --cluster-metadata-decoder --files 00000000000000000000.log`` of it,
run from its directory): six batches of three TopicRecords whose headers hold what a
producer never writes but a damaged or hostile log can: base sequences below -1 and at
Integer.MIN_VALUE / MAX_VALUE, a negative lastOffsetDelta, lastOffsetDelta at MAX_VALUE,
offsets running past Long.MAX_VALUE (CRCs made right, so every tool reads the records).
frames/00000000000000000000.log (``gen.py LOG FRAMES_LOG``): TopicRecords whose
MetadataRecordSerde frame varints are what Kafka's readUnsignedVarint reads its own way
(a fifth byte's bits past 32 dropped, a negative int cut to a short) or refuses (past
Short.MAX_VALUE), with kafka-dump-log.txt beside it."""
import struct
import sys
import uuid

from kcodec.kraft import encode_record
from kcodec.log import encode_batch
from kcodec.log._records_py import crc32c

I64MAX, I32MAX = 2**63 - 1, 2**31 - 1
CASES = [dict(base_offset=0, base_sequence=-5), dict(base_offset=10, base_sequence=I32MAX - 1),
         dict(base_offset=20, base_sequence=-2**31), dict(base_offset=30, base_sequence=7, last_offset_delta=-3),
         dict(base_offset=40, base_sequence=I32MAX, last_offset_delta=I32MAX),
         dict(base_offset=I64MAX - 1, base_sequence=3)]


def batch(base_offset, base_sequence, last_offset_delta=None):
    recs = [(None, encode_record("TopicRecord", {"name": f"t{base_offset % 1000 + i}",
                                                 "topicId": uuid.UUID(int=base_offset % 1000 + i + 1)}, 0))
            for i in range(3)]
    b = bytearray(encode_batch(recs, producer_id=7, producer_epoch=1))
    struct.pack_into(">q", b, 0, base_offset)
    struct.pack_into(">i", b, 53, base_sequence)
    if last_offset_delta is not None:
        struct.pack_into(">i", b, 23, last_offset_delta)
    struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    return bytes(b)



def frames():
    v = encode_record("TopicRecord", {"name": "t", "topicId": uuid.UUID(int=1)}, 0)   # 01 02 00 ...
    values = [bytes([0x81, 0x80, 0x80, 0x80, 0x10]) + v[1:],          # frame version 1 + 2**32
              v[:1] + bytes([0x82, 0x80, 0x80, 0x80, 0x10]) + v[2:],  # type 2 + 2**32
              v[:2] + bytes([0x80, 0x80, 0x80, 0x80, 0x10]) + v[3:],  # version 0 + 2**32
              v[:1] + bytes([0x82, 0x80, 0x80, 0x80, 0x7F]) + v[2:],  # type: a negative int
              v[:1] + bytes([0x82, 0x80, 0x00]) + v[2:],              # type 2, overlong
              v[:1] + bytes([0x82, 0x80, 0x04]) + v[2:],              # type 0x10002: too large
              v[:2] + bytes([0x80, 0x80, 0x04]) + v[3:],              # version 0x10000: too large
              bytes([0x81, 0x80, 0x04]) + v[1:]]                      # frame version 0x10001
    return encode_batch([(None, x) for x in values])


if __name__ == "__main__":
    open(sys.argv[1], "wb").write(b"".join(batch(**c) for c in CASES))
    if len(sys.argv) > 2:
        open(sys.argv[2], "wb").write(frames())
