"""Embedded examples for ``kcodec decode`` without arguments: records a Kafka 4.1.1 broker
wrote to ``__consumer_offsets`` (keys without their int16 record-type prefix; values with
their int16 version prefix)."""

EXAMPLES = [
    {'about': '__consumer_offsets-0@1 key', 'message': 'GroupMetadataKey', 'hex': '000661696f2d7272', 'version': 0},
    {'about': '__consumer_offsets-0@1 value', 'message': 'GroupMetadataValue', 'hex': '00030008636f6e73756d657200000001000a726f756e64726f62696e002e61696f2d72722d63302d61386561626133302d333234632d343730662d393633662d363264653464613865333363000001a202d8bceb00000001002e61696f2d72722d63302d61386561626133302d333234632d343730662d393633662d363264653464613865333363ffff000961696f2d72722d6330000a2f3132372e302e302e3100002710000027100000001c00000000000200087061796d656e747300066f7264657273000000000000004800000000000200066f72646572730000000600000000000000010000000200000003000000040000000500087061796d656e74730000000300000000000000010000000200000000', 'prefixed': True},
    {'about': '__consumer_offsets-0@3 key', 'message': 'OffsetCommitKey', 'hex': '000661696f2d727200087061796d656e747300000000', 'version': 0},
    {'about': '__consumer_offsets-0@3 value', 'message': 'OffsetCommitValue', 'hex': '0004000000000000000affffffff01000001a202d8c8cf00', 'prefixed': True},
    {'about': '__consumer_offsets-5@0 key', 'message': 'ShareGroupMemberMetadataKey', 'hex': '000873686172652d6732001647633932544979435466477155415443387237767867', 'version': 0},
    {'about': '__consumer_offsets-5@0 value', 'message': 'ShareGroupMemberMetadataValue', 'hex': '0000000973686172652d63300b2f3132372e302e302e3102076f726465727300', 'prefixed': True},
    {'about': '__consumer_offsets-5@1 key', 'message': 'ShareGroupMetadataKey', 'hex': '000873686172652d6732', 'version': 0},
    {'about': '__consumer_offsets-5@1 value', 'message': 'ShareGroupMetadataValue', 'hex': '000000000001efdad7a0d1130dc800', 'prefixed': True},
    {'about': '__consumer_offsets-5@2 key', 'message': 'ShareGroupTargetAssignmentMemberKey', 'hex': '000873686172652d6732001647633932544979435466477155415443387237767867', 'version': 0},
    {'about': '__consumer_offsets-5@2 value', 'message': 'ShareGroupTargetAssignmentMemberValue', 'hex': '00000100', 'prefixed': True},
]
