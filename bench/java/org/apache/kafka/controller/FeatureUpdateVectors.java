// Kafka 4.1.1's FeatureControlManager + ConfigurationControlManager.updateFeatures (what
// QuorumController.updateFeatures runs) on the cluster states and requests of
// tests/data/java/kraft_updates (JSON lines on stdin); prints the decision, the top-level
// error code and message (with QuorumController's prefix) and the records, as JSON lines.
// In package org.apache.kafka.controller: the builders are package-private.
//   javac -cp "/work/kafka-jars/*" -d /tmp/jcls bench/java/org/apache/kafka/controller/FeatureUpdateVectors.java
//   java -cp "/tmp/jcls:/work/kafka-jars/*" org.apache.kafka.controller.FeatureUpdateVectors < in > out
package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.KRaftVersion;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.*;

public class FeatureUpdateVectors {
    static final ObjectMapper M = new ObjectMapper();

    static Map<String, VersionRange> ranges(JsonNode o) {
        Map<String, VersionRange> m = new HashMap<>();
        o.fields().forEachRemaining(e -> m.put(e.getKey(),
            VersionRange.of((short) e.getValue().get(0).asInt(), (short) e.getValue().get(1).asInt())));
        return m;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            JsonNode c = M.readTree(line);
            ObjectNode out = M.createObjectNode();
            out.put("id", c.get("id").asText());
            try {
                run(c, out);
            } catch (Throwable e) {
                out.put("exception", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            System.out.println(M.writeValueAsString(out));
        }
    }

    static void run(JsonNode c, ObjectNode out) throws Exception {
        LogContext lc = new LogContext();
        SnapshotRegistry reg = new SnapshotRegistry(lc);
        int nodeId = c.get("node_id").asInt();
        List<Integer> quorum = new ArrayList<>();
        for (JsonNode q : c.get("quorum")) quorum.add(q.asInt());
        Map<String, VersionRange> local = c.get("local").isNull()
            ? QuorumFeatures.defaultSupportedFeatureMap(c.get("unstable").asBoolean())
            : ranges(c.get("local"));
        // registrations as the controller keeps them (TimelineHashMap, filled by id)
        TimelineHashMap<Integer, Map<String, VersionRange>> brokers = new TimelineHashMap<>(reg, 0);
        TimelineHashMap<Integer, Map<String, VersionRange>> controllers = new TimelineHashMap<>(reg, 0);
        c.get("brokers").fields().forEachRemaining(e -> brokers.put(Integer.parseInt(e.getKey()), ranges(e.getValue())));
        c.get("controllers").fields().forEachRemaining(e -> controllers.put(Integer.parseInt(e.getKey()), ranges(e.getValue())));
        final short kraft = (short) c.get("kraft").asInt();
        FeatureControlManager fcm = new FeatureControlManager.Builder()
            .setLogContext(lc).setSnapshotRegistry(reg)
            .setQuorumFeatures(new QuorumFeatures(nodeId, local, quorum))
            .setClusterFeatureSupportDescriber(new ClusterFeatureSupportDescriber() {
                public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> brokerSupported() {
                    return brokers.entrySet().iterator();
                }
                public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> controllerSupported() {
                    return controllers.entrySet().iterator();
                }
            })
            .setKRaftVersionAccessor(new KRaftVersionAccessor() {
                public KRaftVersion kraftVersion() { return KRaftVersion.fromFeatureLevel(kraft); }
                public void upgradeKRaftVersion(int epoch, KRaftVersion v, boolean validateOnly) { }
            })
            .build();
        fcm.replay(new FeatureLevelRecord().setName("metadata.version").setFeatureLevel((short) c.get("mv").asInt()));
        c.get("features").fields().forEachRemaining(e -> fcm.replay(
            new FeatureLevelRecord().setName(e.getKey()).setFeatureLevel((short) e.getValue().asInt())));
        ConfigDef def = new ConfigDef().define("min.insync.replicas", ConfigDef.Type.INT, 1,
            ConfigDef.Importance.HIGH, "");
        Map<ConfigResource.Type, ConfigDef> defs = new HashMap<>();
        defs.put(ConfigResource.Type.BROKER, def);
        defs.put(ConfigResource.Type.TOPIC, def);
        Map<String, Object> staticConfig = new HashMap<>();
        if (!c.get("static_min_isr").isNull()) staticConfig.put("min.insync.replicas", c.get("static_min_isr").asText());
        ConfigurationControlManager ccm = new ConfigurationControlManager.Builder()
            .setLogContext(lc).setSnapshotRegistry(reg)
            .setKafkaConfigSchema(new KafkaConfigSchema(defs, Collections.singletonMap("min.insync.replicas",
                Collections.singletonList(new org.apache.kafka.server.config.ConfigSynonym("min.insync.replicas")))))
            .setStaticConfig(staticConfig).setNodeId(nodeId).setFeatureControl(fcm).build();
        for (JsonNode cfg : c.get("configs")) {
            ccm.replay(new ConfigRecord().setResourceType(ConfigResource.Type.BROKER.id())
                .setResourceName(cfg.get(0).asText()).setName(cfg.get(1).asText()).setValue(cfg.get(2).asText()));
        }
        // QuorumController.updateFeatures: two HashMaps filled in request order
        Map<String, Short> updates = new HashMap<>();
        Map<String, FeatureUpdate.UpgradeType> types = new HashMap<>();
        for (JsonNode u : c.get("updates")) {
            types.put(u.get(0).asText(), FeatureUpdate.UpgradeType.fromCode(u.get(2).asInt()));
            updates.put(u.get(0).asText(), (short) u.get(1).asInt());
        }
        ControllerResult<ApiError> r = ccm.updateFeatures(updates, types, c.get("validate_only").asBoolean(), 1);
        ApiError e = r.response();
        out.put("error_code", e.error().code());
        if (e.isSuccess()) out.putNull("message");
        else out.put("message", "The update failed for all features since the following feature had an error: " + e.message());
        ArrayNode recs = out.putArray("records");
        for (ApiMessageAndVersion m : r.records()) {
            ArrayNode a = recs.addArray();
            a.add(m.message().getClass().getSimpleName());
            a.add(m.version());
            a.add(MetadataJsonConverters.writeJson(m.message(), m.version()));
        }
    }
}
