// Curator's side of `zkctl bench lock|latch --curator`: CONTENDERS sessions (each its own
// CuratorFramework) on one InterProcessMutex or LeaderLatch, each cycling acquire/release
// (join/leave), timed inside this JVM with System.nanoTime: the same loop as zkctl's own
// (zkctl/src/commands/bench_contention.rs), against the same server in the same run. Compiled
// and started by zkctl through the test kit's JavaPrograms (zkctl/src/commands/bench_curator.rs);
// the interop tests compile it with the other peers.
//
//   java CuratorContentionBench CONNECT SESSION_MS lock|latch PATH CONTENDERS WARMUP WARMUP_MS HANDOFFS
//
// A hand-off is the time from one holder starting to let go (release, or close of its latch)
// to the next one's acquire (await) returning, both read in this process. The first WARMUP
// hand-offs, and as many more as WARMUP_MS takes (the JIT), are not measured; then HANDOFFS
// are. Prints one line and exits:
//
//   HANDOFFS window_ns W latencies_ns L1,L2,...
//
// W from the acquisition that ends the warm-up to the last measured one. On a failure it
// prints `ERROR <message>` and exits 1.

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;

public final class CuratorContentionBench {
    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    /// How long anything may take before the run is reported as stuck.
    private static final long STUCK_MS = 120_000;

    private final boolean latch;
    private final String path;
    private final int warmup;
    private final long warmupNs;
    private final int handoffs;
    private final long started = System.nanoTime();
    /// When the last holder started to let go (nanoTime).
    private volatile long releasedAt;
    /// Acquisitions so far: the first is no hand-off, the k-th after it is hand-off k.
    private final AtomicInteger taken = new AtomicInteger();
    /// The acquisition that ended the warm-up (-1 until then), and its time.
    private volatile int windowFirst = -1;
    private volatile long windowStart;
    private volatile long windowEnd;
    private final long[] latencies;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private CuratorContentionBench(boolean latch, String path, int warmup, long warmupMs,
                                   int handoffs) {
        this.latch = latch;
        this.path = path;
        this.warmup = warmup;
        this.warmupNs = TimeUnit.MILLISECONDS.toNanos(warmupMs);
        this.handoffs = handoffs;
        this.latencies = new long[handoffs];
    }

    /// Records an acquisition at `now`; false once every measured hand-off is in (the
    /// contender then lets go and stops).
    private boolean acquired(long now) {
        int n = taken.getAndIncrement();
        int first = windowFirst;
        if (first < 0) {
            if (n >= warmup && now - started >= warmupNs) {
                // Only one contender holds at a time, so only one gets here per n.
                windowStart = now;
                windowFirst = n;
            }
            return true;
        }
        int k = n - first; // measured hand-offs: 1..=handoffs
        if (k > handoffs) {
            return false;
        }
        latencies[k - 1] = now - releasedAt;
        if (k == handoffs) {
            windowEnd = now;
            return false;
        }
        return true;
    }

    private void contend(CuratorFramework client, int id) throws Exception {
        InterProcessMutex mutex = latch ? null : new InterProcessMutex(client, path);
        for (int round = 0; ; round++) {
            LeaderLatch leader = null;
            if (latch) {
                leader = new LeaderLatch(client, path, "curator-" + id + "-" + round);
                leader.start();
                if (!leader.await(STUCK_MS, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("stuck waiting for leadership");
                }
            } else if (!mutex.acquire(STUCK_MS, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("stuck waiting for the lock");
            }
            boolean more = acquired(System.nanoTime());
            releasedAt = System.nanoTime();
            if (latch) {
                leader.close(); // CloseMode.SILENT, as zkctl's side closes
            } else {
                mutex.release();
            }
            if (!more) {
                return;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 8) {
            OUT.println("ERROR usage: CONNECT SESSION_MS lock|latch PATH CONTENDERS WARMUP "
                + "WARMUP_MS HANDOFFS");
            System.exit(1);
        }
        String connect = args[0];
        int sessionMs = Integer.parseInt(args[1]);
        boolean latch = args[2].equals("latch");
        int contenders = Integer.parseInt(args[4]);
        CuratorContentionBench bench = new CuratorContentionBench(latch, args[3],
            Integer.parseInt(args[5]), Long.parseLong(args[6]), Integer.parseInt(args[7]));
        List<CuratorFramework> clients = new ArrayList<>();
        try {
            for (int i = 0; i < contenders; i++) {
                CuratorFramework c = CuratorFrameworkFactory.newClient(connect, sessionMs,
                    (int) STUCK_MS, new RetryNTimes(3, 100));
                c.start();
                clients.add(c);
            }
            for (CuratorFramework c : clients) {
                if (!c.blockUntilConnected((int) STUCK_MS, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("no session");
                }
            }
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < contenders; i++) {
                CuratorFramework c = clients.get(i);
                int id = i;
                Thread t = new Thread(() -> {
                    try {
                        bench.contend(c, id);
                    } catch (Throwable e) {
                        bench.failure.compareAndSet(null, e);
                    }
                }, "contender-" + i);
                t.setDaemon(true);
                threads.add(t);
            }
            threads.forEach(Thread::start);
            long deadline = System.currentTimeMillis() + STUCK_MS;
            for (Thread t : threads) {
                t.join(Math.max(1, deadline - System.currentTimeMillis()));
                if (t.isAlive()) {
                    throw new IllegalStateException("stuck: " + t.getName() + " did not finish");
                }
            }
            Throwable e = bench.failure.get();
            if (e != null) {
                throw new IllegalStateException(e.toString(), e);
            }
            StringBuilder line = new StringBuilder("HANDOFFS window_ns ")
                .append(bench.windowEnd - bench.windowStart).append(" latencies_ns ");
            for (int i = 0; i < bench.latencies.length; i++) {
                line.append(i == 0 ? "" : ",").append(bench.latencies[i]);
            }
            OUT.println(line);
        } catch (Throwable e) {
            OUT.println("ERROR " + e.toString().replace('\n', ' '));
            OUT.flush();
            System.exit(1);
        } finally {
            clients.forEach(CuratorFramework::close);
        }
        OUT.flush();
        System.exit(0);
    }
}
