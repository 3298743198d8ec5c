// Kafka 4.1.1's MetadataImage.write: replays a __cluster_metadata log directory's segments
// (and/or a snapshot) with RecordsIterator + MetadataRecordSerde into MetadataDelta/Image,
// then writes the image with ImageWriterOptions at each requested metadata.version; prints
// per level one JSON line: the records as [type, version, json] and the SHA-256 of the
// concatenated serialized records (MetadataRecordSerde framing).
//   java -cp "/tmp/jcls:/work/kafka-jars/*" ImageWriteVectors OUT_PREFIX LEVELS FILE...
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.writer.ImageWriterOptions;
import org.apache.kafka.image.writer.RecordListWriter;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.internals.RecordsIterator;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

import java.io.File;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

public class ImageWriteVectors {
    public static void main(String[] args) throws Exception {
        ObjectMapper m = new ObjectMapper();
        MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        long last = -1;
        for (int i = 2; i < args.length; i++) {
            try (FileRecords fr = FileRecords.open(new File(args[i]), false);
                 RecordsIterator<ApiMessageAndVersion> it = new RecordsIterator<>(fr, MetadataRecordSerde.INSTANCE,
                     BufferSupplier.create(), 1 << 24, true, new LogContext())) {
                while (it.hasNext()) {
                    Batch<ApiMessageAndVersion> b = it.next();
                    for (ApiMessageAndVersion r : b.records()) {
                        // metadata transactions: the loader applies a committed one's records
                        String t = r.message().getClass().getSimpleName();
                        if (t.endsWith("TransactionRecord")) continue;
                        delta.replay(r.message());
                    }
                    last = b.lastOffset();
                }
            }
        }
        MetadataImage image = delta.apply(new MetadataProvenance(last, 0, 0, true));
        MetadataRecordSerde serde = MetadataRecordSerde.INSTANCE;
        try (PrintStream out = new PrintStream(new FileOutputStream(args[0]), false, "UTF-8")) {
            for (String lv : args[1].split(",")) {
                MetadataVersion mv = MetadataVersion.fromFeatureLevel(Short.parseShort(lv));
                RecordListWriter w = new RecordListWriter();
                List<String> losses = new ArrayList<>();
                // ELR as the image has it, where the target level can carry it (isElrSupported)
                image.write(w, new ImageWriterOptions.Builder(image).setMetadataVersion(mv)
                    .setEligibleLeaderReplicasEnabled(image.features().isElrEnabled() && mv.isElrSupported())
                    .setLossHandler(e -> losses.add(e.getMessage())).build());
                MessageDigest sha = MessageDigest.getInstance("SHA-256");
                ObjectNode o = m.createObjectNode();
                o.put("level", mv.featureLevel());
                ArrayNode recs = o.putArray("records");
                List<String> hexes = new ArrayList<>();
                for (ApiMessageAndVersion r : w.records()) {
                    ObjectSerializationCache cache = new ObjectSerializationCache();
                    int size = serde.recordSize(r, cache);
                    org.apache.kafka.common.protocol.ByteBufferAccessor acc =
                        new org.apache.kafka.common.protocol.ByteBufferAccessor(ByteBuffer.allocate(size));
                    serde.write(r, cache, acc);
                    sha.update(acc.buffer().array());
                    hexes.add(java.util.HexFormat.of().formatHex(acc.buffer().array()));
                    ArrayNode a = recs.addArray();
                    a.add(r.message().getClass().getSimpleName());
                    a.add(r.version());
                    a.add(MetadataJsonConverters.writeJson(r.message(), r.version()));
                }
                StringBuilder hex = new StringBuilder();
                for (byte x : sha.digest()) hex.append(String.format("%02x", x & 0xff));
                o.put("sha256", hex.toString());
                o.put("count", w.records().size());
                if (hexes.size() <= 500000) {
                    ArrayNode hx = o.putArray("hex");
                    for (String x : hexes) hx.add(x);
                } else {
                    o.remove("records");
                }
                ArrayNode ls = o.putArray("losses");
                for (String l : losses) ls.add(l);
                out.println(m.writeValueAsString(o));
            }
        }
    }
}
