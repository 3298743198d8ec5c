// Drives Kafka 4.1.1's own RackAwareTaskAssignor.optimizeActiveTasks on inputs written by
// bench/bench_streams_rack.py, for the side-by-side bench and the test vectors under
// tests/data/streams_rack/.  Our harness code; Kafka's classes do the work.
//
// Input (text, one record a line):
//   problem <strategy> <traffic_cost> <non_overlap_cost> <racks>
//   client <process-id-int> <rack>                 ProcessId = UUID(0, n)
//   task <subtopology> <partition> <client-index> <rack> [<rack> ...]   the source partition's replica racks
// Usage: java -cp "bench/java:/work/kafka-jars/*" \
//   org.apache.kafka.streams.processor.internals.assignment.RackAssign INPUT [RUNS] [--assignment]
// Prints per run: "run <i> cpu_s <thread CPU seconds> cost <cost>"; with --assignment then
// "assign <subtopology>_<partition> <client-index>" for every task after the first run.
package org.apache.kafka.streams.processor.internals.assignment;

import java.io.BufferedReader;
import java.io.FileReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;

public class RackAssign {
    static String strategy;
    static int traffic, nonOverlap, racks;
    static final List<ProcessId> pids = new ArrayList<>();
    static final List<String> clientRack = new ArrayList<>();
    static final List<TaskId> tasks = new ArrayList<>();
    static final List<Integer> owner = new ArrayList<>();
    static final List<String[]> replicaRacks = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        boolean printAssignment = args.length > 2 && args[2].equals("--assignment");
        try (BufferedReader r = new BufferedReader(new FileReader(args[0]))) {
            for (String line; (line = r.readLine()) != null; ) {
                String[] f = line.trim().split(" ");
                switch (f[0]) {
                    case "problem":
                        strategy = f[1]; traffic = Integer.parseInt(f[2]); nonOverlap = Integer.parseInt(f[3]);
                        racks = Integer.parseInt(f[4]);
                        break;
                    case "client":
                        pids.add(new ProcessId(new UUID(0, Long.parseLong(f[1]))));
                        clientRack.add(f[2]);
                        break;
                    case "task":
                        tasks.add(new TaskId(Integer.parseInt(f[1]), Integer.parseInt(f[2])));
                        owner.add(Integer.parseInt(f[3]));
                        String[] rr = new String[f.length - 4];
                        System.arraycopy(f, 4, rr, 0, rr.length);
                        replicaRacks.add(rr);
                        break;
                    default:
                }
            }
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (int run = 0; run < runs; run++) {
            long t0 = mx.getCurrentThreadCpuTime();
            SortedMap<ProcessId, ClientState> states = new TreeMap<>();
            long cost = solve(states);
            long t1 = mx.getCurrentThreadCpuTime();
            System.out.println("run " + run + " cpu_s " + (t1 - t0) / 1e9 + " cost " + cost);
            System.out.flush();
            if (run == 0 && printAssignment) {
                Map<ProcessId, Integer> index = new HashMap<>();
                for (int i = 0; i < pids.size(); i++) index.put(pids.get(i), i);
                for (Map.Entry<ProcessId, ClientState> e : states.entrySet())
                    for (TaskId t : new TreeSet<>(e.getValue().activeTasks()))
                        System.out.println("assign " + t + " " + index.get(e.getKey()));
            }
        }
    }

    // Everything the assignor reads is rebuilt per run (optimizeActiveTasks moves tasks in place).
    static long solve(SortedMap<ProcessId, ClientState> states) {
        Map<String, Node> nodeOf = new HashMap<>();
        List<Node> nodes = new ArrayList<>();
        Set<String> rackNames = new TreeSet<>(clientRack);
        for (String[] rr : replicaRacks) Collections.addAll(rackNames, rr);
        int id = 0;
        for (String rack : rackNames) {
            Node n = new Node(id++, "broker" + id, 9092, rack);
            nodeOf.put(rack, n);
            nodes.add(n);
        }
        List<PartitionInfo> parts = new ArrayList<>();
        Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
        Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
        for (int i = 0; i < tasks.size(); i++) {
            TaskId t = tasks.get(i);
            String topic = "in-" + t.subtopology();
            Node[] replicas = new Node[replicaRacks.get(i).length];
            for (int k = 0; k < replicas.length; k++) replicas[k] = nodeOf.get(replicaRacks.get(i)[k]);
            parts.add(new PartitionInfo(topic, t.partition(), replicas[0], replicas, replicas));
            partitionsForTask.put(t, Collections.singleton(new TopicPartition(topic, t.partition())));
            tasksForTopicGroup.computeIfAbsent(new Subtopology(t.subtopology(), null), k -> new HashSet<>()).add(t);
        }
        Cluster cluster = new Cluster("c", nodes, parts, Collections.emptySet(), Collections.emptySet());
        Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer = new HashMap<>();
        for (int c = 0; c < pids.size(); c++) {
            racksForProcessConsumer.put(pids.get(c), Collections.singletonMap("consumer-" + c, Optional.of(clientRack.get(c))));
            states.put(pids.get(c), new ClientState(pids.get(c), Collections.emptyMap()));
        }
        for (int i = 0; i < tasks.size(); i++) states.get(pids.get(owner.get(i))).assignActive(tasks.get(i));
        AssignmentConfigs configs = new AssignmentConfigs(0L, 1, 0, 60_000L, Collections.emptyList(),
            OptionalInt.of(traffic), OptionalInt.of(nonOverlap), strategy);
        RackAwareTaskAssignor assignor = new RackAwareTaskAssignor(cluster, partitionsForTask, Collections.emptyMap(),
            tasksForTopicGroup, racksForProcessConsumer, null, configs, Time.SYSTEM);
        if (!assignor.canEnableRackAwareAssignor()) throw new IllegalStateException("rack awareness not enabled");
        SortedSet<TaskId> all = new TreeSet<>(tasks);
        return assignor.optimizeActiveTasks(all, states, traffic, nonOverlap);
    }
}
