// Kafka 4.1.1's own SubscriptionInfo.encode / AssignmentInfo.encode on the inputs of
// bench/bench_java_order.py, which starts this and drives it (rounds interleaved with its own):
//   javac -cp "/work/kafka-jars/*" -d /tmp/sub bench/java/StreamsUserDataBench.java
//   java -Xms512m -Xmx512m -XX:+UseSerialGC -cp "/tmp/sub:/work/kafka-jars/*" StreamsUserDataBench
// Prints "cold <case> <ms>" (the first call of each case in this JVM, thread CPU time),
// "sha256 <case> <hex>" (of the bytes), then "ready"; each "round" line on stdin runs every case REPS times and prints "warm <case> <ms>"
// (thread CPU per call), then "end".  Warm-up before "ready": WARMUP calls of each case.
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.*;
import java.util.function.Supplier;

public class StreamsUserDataBench {
    static final ThreadMXBean T = ManagementFactory.getThreadMXBean();
    static long sink;

    static double cpuMs(Supplier<java.nio.ByteBuffer> f, int reps) {
        long t0 = T.getCurrentThreadCpuTime();
        for (int i = 0; i < reps; i++) sink += f.get().remaining();
        return (T.getCurrentThreadCpuTime() - t0) / 1e6 / reps;
    }

    public static void main(String[] args) throws Exception {
        Map<TaskId, Long> sums = new LinkedHashMap<>();
        for (int s = 0; s < 20; s++)
            for (int p = 0; p < 100; p++) sums.put(new TaskId(s, p), (s + p) % 2 == 1 ? -2L : 1000L + p);
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < 800 && tps.size() < 15000; p++)
            for (int t = 1; t < 20 && tps.size() < 15000; t++) tps.add(new TopicPartition("topic-" + t, p));
        Map<HostInfo, Set<TopicPartition>> byHost = new LinkedHashMap<>(), standby = new LinkedHashMap<>();
        for (int h = 0; h < 50; h++) {
            byHost.put(new HostInfo("host-" + h, 8080), new LinkedHashSet<>(tps.subList(h * 300, (h + 1) * 300)));
            int o = (h + 1) % 50;
            standby.put(new HostInfo("host-" + h, 8080), new LinkedHashSet<>(tps.subList(o * 300, (o + 1) * 300)));
        }
        // SubscriptionInfo builds its task sets in the constructor: timed with encode()
        Map<String, Supplier<java.nio.ByteBuffer>> cases = new LinkedHashMap<>();
        cases.put("sub_v6", () -> new SubscriptionInfo(6, 6, new ProcessId(new UUID(0, 7)),
            "host-0:8080", sums, (byte) 0, 0, Collections.emptyMap()).encode());
        for (int v : new int[]{7, 11}) {
            AssignmentInfo a = new AssignmentInfo(v, v, new ArrayList<>(), new HashMap<>(), byHost, standby, 0);
            cases.put("asg_v" + v, a::encode);
        }
        Map<String, Integer> reps = Map.of("sub_v6", 400, "asg_v7", 40, "asg_v11", 40);
        for (Map.Entry<String, Supplier<java.nio.ByteBuffer>> c : cases.entrySet())
            System.out.printf("cold %s %.3f%n", c.getKey(), cpuMs(c.getValue(), 1));
        for (Map.Entry<String, Supplier<java.nio.ByteBuffer>> c : cases.entrySet()) {
            java.nio.ByteBuffer b = c.getValue().get();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            System.out.printf("sha256 %s %s%n", c.getKey(),
                HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes)));
        }
        int warmup = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        for (Map.Entry<String, Supplier<java.nio.ByteBuffer>> c : cases.entrySet()) {
            int n = c.getKey().startsWith("sub") ? warmup * 5 : warmup / 4;
            for (int i = 0; i < n; i++) sink += c.getValue().get().remaining();
        }
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null && line.equals("round"); ) {
            for (Map.Entry<String, Supplier<java.nio.ByteBuffer>> c : cases.entrySet())
                System.out.printf("warm %s %.4f%n", c.getKey(), cpuMs(c.getValue(), reps.get(c.getKey())));
            System.out.println("end");
            System.out.flush();
        }
        System.err.println("(checksum " + sink + ")");
    }
}
