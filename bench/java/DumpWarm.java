// Runs Kafka's DumpLogSegments N times in one JVM (the warm measurement of
// bench/bench_dumps.py): prints, per run, the process CPU time (all JVM threads: JIT and
// GC included) and wall time to stderr; the dump text goes to /dev/null through a
// buffered PrintStream, as System.out writes a redirected stdout.
//
//   javac -cp "/work/kafka-jars/*" -d OUT bench/java/DumpWarm.java
//   java -Xmx2g -cp "OUT:/work/kafka-jars/*" DumpWarm RUNS <DumpLogSegments args...>
import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.Arrays;

public class DumpWarm {
    public static void main(String[] args) throws Exception {
        int runs = Integer.parseInt(args[0]);
        String[] dumpArgs = Arrays.copyOfRange(args, 1, args.length);
        PrintStream err = System.err;
        System.setOut(new PrintStream(new BufferedOutputStream(new FileOutputStream("/dev/null"), 8192), false));
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int i = 0; i < runs; i++) {
            long c0 = os.getProcessCpuTime(), t0 = System.nanoTime();
            kafka.tools.DumpLogSegments.main(dumpArgs);
            System.out.flush();
            long c1 = os.getProcessCpuTime(), t1 = System.nanoTime();
            err.printf("run %d cpu %.3f wall %.3f%n", i, (c1 - c0) / 1e9, (t1 - t0) / 1e9);
        }
    }
}
