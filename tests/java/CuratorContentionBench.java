// Curator's side of `zkctl bench lock|latch|semaphore --curator`: CONTENDERS sessions (each its
// own CuratorFramework) on one InterProcessMutex, LeaderLatch or InterProcessSemaphoreV2 of one
// lease, each cycling acquire/release (join/leave), and uncontended cycles (each locker a lock
// of its own), timed inside this JVM
// with System.nanoTime: the same loops as zkctl's own (zkctl/src/commands/bench_contention.rs,
// and `cycles` in zkctl/src/commands/bench_recipes.rs), against the same server in the same run. Compiled
// and started by zkctl through the test kit's JavaPrograms (zkctl/src/commands/bench_curator.rs);
// the interop tests compile it with the other peers.
//
//   java CuratorContentionBench CONNECT SESSION_MS lock|latch|semaphore PATH CONTENDERS
//
// Protocol: the sessions connect, then `READY`; one command per line on stdin, one answer per
// line on stdout. zkctl alternates chunks of ours and of Curator's, so that a change in the
// machine's load falls on both sides.
//
//   run WARMUP WARMUP_MS HANDOFFS
//       -> HANDOFFS window_ns W latencies_ns L1,L2,...
//       Every contender cycles until HANDOFFS hand-offs are measured, after WARMUP unmeasured
//       ones and at least WARMUP_MS of them (the JIT); then each stops at its next turn. A
//       hand-off is the time from one holder starting to let go (release, return of its
//       lease, or close of its latch) to the next one's acquire (await) returning, both read in this process. W is
//       from the acquisition that ends the warm-up to the last measured one.
//   cycles SESSIONS LOCKERS WARMUP WARMUP_MS CYCLES
//       -> CYCLES window_ns W latencies_ns L1,L2,...
//       Uncontended: LOCKERS threads, locker i on session i % SESSIONS with a lock (latch,
//       semaphore) of its own, each cycling acquire and release (start, await leadership,
//       close; acquire a lease, return it) until
//       CYCLES cycles are done in all, after WARMUP unmeasured ones and at least WARMUP_MS of
//       them; Li is one cycle's time, W the measured cycles' wall time. zkctl's own
//       uncontended cycles are the same loop (zkctl/src/commands/bench_recipes.rs).
//   exit (or the end of stdin) -> BYE, and the sessions close.
//
// A failure is answered with `ERROR <message>`, and the program exits 1.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
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
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryNTimes;

public final class CuratorContentionBench {
    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    /// How long anything may take before the run is reported as stuck.
    private static final long STUCK_MS = 120_000;

    /// One participant's way in (acquire, take a lease, or join and await leadership); what
    /// it returns lets go when closed.
    private interface Taker {
        AutoCloseable take() throws Exception;
    }

    /// A taker of `kind` (lock, latch, semaphore) on `client` at `lockPath`; a latch joins as
    /// `id` and the round.
    private static Taker taker(String kind, CuratorFramework client, String lockPath,
                               String id) {
        switch (kind) {
            case "lock": {
                InterProcessMutex mutex = new InterProcessMutex(client, lockPath);
                return () -> {
                    if (!mutex.acquire(STUCK_MS, TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("stuck waiting for the lock");
                    }
                    return mutex::release;
                };
            }
            case "semaphore": {
                InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, lockPath, 1);
                return () -> {
                    Lease lease = semaphore.acquire(STUCK_MS, TimeUnit.MILLISECONDS);
                    if (lease == null) {
                        throw new IllegalStateException("stuck waiting for a lease");
                    }
                    return lease;
                };
            }
            case "latch": {
                AtomicInteger round = new AtomicInteger();
                return () -> {
                    LeaderLatch leader =
                        new LeaderLatch(client, lockPath, id + "-" + round.getAndIncrement());
                    leader.start();
                    if (!leader.await(STUCK_MS, TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("stuck waiting for leadership");
                    }
                    return leader::close; // CloseMode.SILENT, as zkctl's side closes
                };
            }
            default:
                throw new IllegalArgumentException("unknown recipe: " + kind);
        }
    }

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

    private CuratorContentionBench(int warmup, long warmupMs, int handoffs) {
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

    private void contend(Taker taker) throws Exception {
        for (;;) {
            AutoCloseable held = taker.take();
            boolean more = acquired(System.nanoTime());
            releasedAt = System.nanoTime();
            held.close();
            if (!more) {
                return;
            }
        }
    }

    /// Runs one chunk on `clients`: a thread per contender until the chunk is measured.
    private static String chunk(String kind, String path, List<CuratorFramework> clients,
                                int warmup, long warmupMs, int handoffs) throws Exception {
        CuratorContentionBench bench = new CuratorContentionBench(warmup, warmupMs, handoffs);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients.size(); i++) {
            Taker taker = taker(kind, clients.get(i), path, "curator-" + i);
            Thread t = new Thread(() -> {
                try {
                    bench.contend(taker);
                } catch (Throwable e) {
                    bench.failure.compareAndSet(null, e);
                }
            }, "contender-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        joinAll(threads);
        Throwable e = bench.failure.get();
        if (e != null) {
            throw new IllegalStateException(e.toString(), e);
        }
        return line("HANDOFFS", bench.windowEnd - bench.windowStart, bench.latencies);
    }

    /// Waits for every thread, failing if one is still running after STUCK_MS.
    private static void joinAll(List<Thread> threads) throws InterruptedException {
        long deadline = System.currentTimeMillis() + STUCK_MS;
        for (Thread t : threads) {
            t.join(Math.max(1, deadline - System.currentTimeMillis()));
            if (t.isAlive()) {
                throw new IllegalStateException("stuck: " + t.getName() + " did not finish");
            }
        }
    }

    /// `WHAT window_ns W latencies_ns L1,L2,...`
    private static String line(String what, long window, long[] latencies) {
        StringBuilder line = new StringBuilder(what).append(" window_ns ").append(window)
            .append(" latencies_ns ");
        for (int i = 0; i < latencies.length; i++) {
            line.append(i == 0 ? "" : ",").append(latencies[i]);
        }
        return line.toString();
    }

    /// One thread per taker, cycling until `count` cycles are done in all and `minNs` has
    /// passed; each cycle's time goes to `latencies[ticket]` when `latencies` is given.
    private static void runCycles(Taker[] takers, int count, long minNs, long[] latencies)
            throws Exception {
        AtomicInteger tickets = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long until = System.nanoTime() + minNs;
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < takers.length; i++) {
            Taker taker = takers[i];
            Thread t = new Thread(() -> {
                try {
                    for (;;) {
                        int ticket = tickets.getAndIncrement();
                        if (ticket >= count && (latencies != null || System.nanoTime() >= until)) {
                            return;
                        }
                        long t0 = System.nanoTime();
                        taker.take().close();
                        if (latencies != null) {
                            latencies[ticket] = System.nanoTime() - t0;
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "locker-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        joinAll(threads);
        Throwable e = failure.get();
        if (e != null) {
            throw new IllegalStateException(e.toString(), e);
        }
    }

    /// Uncontended cycles: `warmup` unmeasured (and at least `warmupMs`), then `cycles`.
    private static String cycles(String kind, String path, List<CuratorFramework> clients,
                                 int sessions, int lockers, int warmup, long warmupMs,
                                 int cycles) throws Exception {
        if (sessions < 1 || sessions > clients.size() || lockers < 1) {
            throw new IllegalArgumentException("cycles: 1.." + clients.size()
                + " sessions and at least one locker");
        }
        Taker[] takers = new Taker[lockers];
        for (int i = 0; i < lockers; i++) {
            takers[i] = taker(kind, clients.get(i % sessions), path + "-cycle-" + i,
                "curator-cycle-" + i);
        }
        runCycles(takers, warmup, TimeUnit.MILLISECONDS.toNanos(warmupMs), null);
        long[] latencies = new long[cycles];
        long start = System.nanoTime();
        runCycles(takers, cycles, 0, latencies);
        return line("CYCLES", System.nanoTime() - start, latencies);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            OUT.println("ERROR usage: CONNECT SESSION_MS lock|latch|semaphore PATH CONTENDERS");
            System.exit(1);
        }
        String connect = args[0];
        int sessionMs = Integer.parseInt(args[1]);
        String kind = args[2];
        String path = args[3];
        int contenders = Integer.parseInt(args[4]);
        List<CuratorFramework> clients = new ArrayList<>();
        try {
            if (!List.of("lock", "latch", "semaphore").contains(kind)) {
                throw new IllegalArgumentException("unknown recipe: " + kind);
            }
            for (int i = 0; i < contenders; i++) {
                CuratorFramework c = CuratorFrameworkFactory.newClient(connect, sessionMs,
                    sessionMs, new RetryNTimes(3, 100));
                c.start();
                clients.add(c);
            }
            for (CuratorFramework c : clients) {
                if (!c.blockUntilConnected((int) STUCK_MS, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("no session");
                }
            }
            OUT.println("READY");
            BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] words = line.trim().split(" ");
                if (words[0].equals("exit")) {
                    break;
                }
                if (words[0].equals("run") && words.length == 4) {
                    OUT.println(chunk(kind, path, clients, Integer.parseInt(words[1]),
                        Long.parseLong(words[2]), Integer.parseInt(words[3])));
                } else if (words[0].equals("cycles") && words.length == 6) {
                    OUT.println(cycles(kind, path, clients, Integer.parseInt(words[1]),
                        Integer.parseInt(words[2]), Integer.parseInt(words[3]),
                        Long.parseLong(words[4]), Integer.parseInt(words[5])));
                } else {
                    throw new IllegalArgumentException("unknown command: " + line);
                }
            }
        } catch (Throwable e) {
            OUT.println("ERROR " + e.toString().replace('\n', ' '));
            OUT.flush();
            System.exit(1);
        } finally {
            clients.forEach(CuratorFramework::close);
        }
        OUT.println("BYE");
        OUT.flush();
        System.exit(0);
    }
}
