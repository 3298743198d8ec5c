// Kafka 4.1.1's own SubscriptionInfo.encode / AssignmentInfo.encode on the inputs of
// bench/bench_java_order.py, timed by the thread's CPU time after JIT warm-up.
//   javac -cp "/work/kafka-jars/*" -d /tmp/sub bench/java/StreamsUserDataBench.java
//   java -cp "/tmp/sub:/work/kafka-jars/*" StreamsUserDataBench
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.*;
import java.util.function.Supplier;

public class StreamsUserDataBench {
    static final ThreadMXBean T = ManagementFactory.getThreadMXBean();
    static long sink;

    static double cpuMs(Supplier<java.nio.ByteBuffer> f, int reps) {
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long t0 = T.getCurrentThreadCpuTime();
            for (int i = 0; i < reps; i++) sink += f.get().remaining();
            best = Math.min(best, (T.getCurrentThreadCpuTime() - t0) / 1e6 / reps);
        }
        return best;
    }

    public static void main(String[] args) {
        Map<TaskId, Long> sums = new LinkedHashMap<>();
        for (int s = 0; s < 20; s++)
            for (int p = 0; p < 100; p++) sums.put(new TaskId(s, p), (s + p) % 2 == 1 ? -2L : 1000L + p);
        // SubscriptionInfo builds its task sets in the constructor: timed with encode()
        Supplier<java.nio.ByteBuffer> sub = () -> new SubscriptionInfo(6, 6, new ProcessId(new UUID(0, 7)),
            "host-0:8080", sums, (byte) 0, 0, Collections.emptyMap()).encode();
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < 800 && tps.size() < 15000; p++)
            for (int t = 1; t < 20 && tps.size() < 15000; t++) tps.add(new TopicPartition("topic-" + t, p));
        Map<HostInfo, Set<TopicPartition>> byHost = new LinkedHashMap<>(), standby = new LinkedHashMap<>();
        for (int h = 0; h < 50; h++) {
            byHost.put(new HostInfo("host-" + h, 8080), new LinkedHashSet<>(tps.subList(h * 300, (h + 1) * 300)));
            int o = (h + 1) % 50;
            standby.put(new HostInfo("host-" + h, 8080), new LinkedHashSet<>(tps.subList(o * 300, (o + 1) * 300)));
        }
        for (int v : new int[]{7, 11}) {
            AssignmentInfo a = new AssignmentInfo(v, v, new ArrayList<>(), new HashMap<>(), byHost, standby, 0);
            for (int i = 0; i < 300; i++) sink += a.encode().remaining();      // warm-up
            System.out.printf("AssignmentInfo v%d host maps: %.3f ms%n", v, cpuMs(a::encode, 100));
        }
        for (int i = 0; i < 3000; i++) sink += sub.get().remaining();
        System.out.printf("SubscriptionInfo v6, 2,000 tasks (constructor + encode): %.3f ms%n", cpuMs(sub, 1000));
        System.out.println("(checksum " + sink + ")");
    }
}
