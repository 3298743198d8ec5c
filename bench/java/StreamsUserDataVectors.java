// Kafka 4.1.1's own SubscriptionInfo / AssignmentInfo encoders run on the inputs in
// tests/data/java/streams_userdata cases (JSON lines on stdin), plus java.util.HashMap
// iteration orders, printed as JSON lines with the expected bytes (hex) or key order.
// Inputs are handed over in LinkedHashMap/LinkedHashSet so Kafka's constructors see them in
// the order the case lists them (the order kcodec's encoders receive).
//   javac -cp "/work/kafka-jars/*" -d /tmp/jcls bench/java/StreamsUserDataVectors.java
//   java -cp "/tmp/jcls:/work/kafka-jars/*" StreamsUserDataVectors < cases.jsonl > out.jsonl
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.util.*;

public class StreamsUserDataVectors {
    static final ObjectMapper M = new ObjectMapper();

    static TaskId task(JsonNode t) {
        return t.get(2).isNull() ? new TaskId(t.get(0).asInt(), t.get(1).asInt())
                                 : new TaskId(t.get(0).asInt(), t.get(1).asInt(), t.get(2).asText());
    }

    static Set<TopicPartition> tps(JsonNode a) {
        Set<TopicPartition> s = new LinkedHashSet<>();
        for (JsonNode tp : a) s.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt()));
        return s;
    }

    static Map<HostInfo, Set<TopicPartition>> hosts(JsonNode a) {
        Map<HostInfo, Set<TopicPartition>> m = new LinkedHashMap<>();
        for (JsonNode h : a) m.put(new HostInfo(h.get(0).asText(), h.get(1).asInt()), tps(h.get(2)));
        return m;
    }

    static String hex(ByteBuffer b) {
        StringBuilder sb = new StringBuilder();
        while (b.hasRemaining()) sb.append(String.format("%02x", b.get() & 0xff));
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            JsonNode c = M.readTree(line);
            ObjectNode out = M.createObjectNode();
            out.put("id", c.get("id").asText());
            String kind = c.get("kind").asText();
            try {
                if (kind.equals("sub")) {
                    Map<TaskId, Long> sums = new LinkedHashMap<>();
                    for (JsonNode t : c.get("tasks")) sums.put(task(t), t.get(3).asLong());
                    Map<String, String> tags = new LinkedHashMap<>();
                    for (JsonNode t : c.get("tags")) tags.put(t.get(0).asText(), t.get(1).asText());
                    SubscriptionInfo s = new SubscriptionInfo(c.get("version").asInt(), c.get("latest").asInt(),
                        new ProcessId(UUID.fromString(c.get("process_id").asText())),
                        c.get("endpoint").isNull() ? null : c.get("endpoint").asText(), sums,
                        (byte) c.get("unique").asInt(), c.get("error").asInt(), tags);
                    out.put("hex", hex(s.encode()));
                } else if (kind.equals("asg")) {
                    List<TaskId> active = new ArrayList<>();
                    for (JsonNode t : c.get("active")) active.add(task(t));
                    Map<TaskId, Set<TopicPartition>> standby = new LinkedHashMap<>();
                    for (JsonNode e : c.get("standby")) standby.put(task(e.get(0)), tps(e.get(1)));
                    AssignmentInfo a = new AssignmentInfo(c.get("version").asInt(), c.get("common").asInt(),
                        active, standby, hosts(c.get("hosts")), hosts(c.get("standby_hosts")),
                        c.get("error").asInt());
                    a.setNextRebalanceTime(c.get("next").asLong());
                    out.put("hex", hex(a.encode()));
                } else if (kind.equals("map")) {
                    // a HashMap<Integer|String, ...> filled by put or computeIfAbsent
                    boolean strings = c.get("strings").asBoolean();
                    boolean cia = c.get("op").asText().equals("cia");
                    Map<Object, Object> m = new HashMap<>();
                    for (JsonNode k : c.get("keys")) {
                        Object key = strings ? k.asText() : (Object) Integer.valueOf(k.asInt());
                        if (cia) m.computeIfAbsent(key, x -> 1); else m.put(key, 1);
                    }
                    out.set("order", M.valueToTree(new ArrayList<>(m.keySet())));
                }
            } catch (Exception e) {
                out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            System.out.println(M.writeValueAsString(out));
        }
    }
}
