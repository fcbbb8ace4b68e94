// A peer driven over stdin/stdout that runs Apache Curator's own recipes, so that the Rust
// recipes can be tested against the real thing (tests/curator_interop.rs compiles and runs it
// against Debian's Curator 5.4.0 jars).
//
//   java CuratorPeer mutex     CONNECT PATH          InterProcessMutex (revocable)
//   java CuratorPeer read      CONNECT PATH          InterProcessReadWriteLock.readLock()
//   java CuratorPeer write     CONNECT PATH          InterProcessReadWriteLock.writeLock()
//   java CuratorPeer semaphore CONNECT PATH MAX      InterProcessSemaphoreV2 with MAX leases
//   java CuratorPeer counted   CONNECT PATH COUNTPATH SEED
//                                                    InterProcessSemaphoreV2 whose maximum is the
//                                                    SharedCount at COUNTPATH (seeded with SEED)
//   java CuratorPeer latch     CONNECT PATH ID       LeaderLatch with participant id ID
//   java CuratorPeer selector  CONNECT PATH ID       LeaderSelector with participant id ID
//   java CuratorPeer client    CONNECT               just a client (for the common commands)
//
// Protocol: one line per command on stdin, one line per answer on stdout (UTF-8, flushed after
// each line). The first line is always `CONNECTED` (the session is up). Errors are answered
// with `ERROR <message>`; the peer keeps going. End of stdin or `exit` closes the client and
// exits. Commands run one at a time on the main thread (Curator's locks belong to the thread
// that took them): while it waits for a lock or a lease, the peer reads nothing. Connection
// state changes and diagnostics go to stderr.
//
// Locks (mutex, read, write): the lock is requested at once; `ACQUIRED <node path>` when held.
//   release            -> RELEASED
//   acquire            -> ACQUIRED <node path>            (waits as long as it takes)
//   try MS             -> ACQUIRED <node path> | TIMEOUT
//   participants       -> PARTICIPANTS <node path>,...   (Curator's getParticipantNodes order)
//   readlock           -> READ_ACQUIRED <node path>      (write only: the read lock of the same
//                                                         InterProcessReadWriteLock, Curator's
//                                                         downgrade path)
//   release_read       -> READ_RELEASED
//   a revocation request (mutex) prints REVOCATION_REQUESTED
// Semaphore: nothing is requested at start.
//   acquire            -> LEASE <node path>
//   try MS             -> LEASE <node path> | TIMEOUT
//   release            -> RELEASED                        (returns the oldest lease held)
//   participants       -> PARTICIPANTS <node name>,...
//   setcount N         -> COUNT_SET                       (counted only: SharedCount.setCount)
//   count              -> COUNT <n>                       (counted only: SharedCount.getCount)
//   stress THREADS ROUNDS MARKERS MAX
//                      -> STRESS_DONE <most markers seen> [VIOLATIONS <n>]
//                         each round: take a lease, create an ephemeral (protected) marker
//                         under MARKERS, count the markers (must be <= MAX), delete it,
//                         return the lease
// Latch: started at once; every leadership change prints LEADER or NOT_LEADER.
//   participants       -> PARTICIPANTS <id>,...          (getParticipants order, leader first)
//   leader             -> LEADER_ID <id>                 (getLeader)
//   has                -> HAS_LEADERSHIP true|false
//   path               -> OUR_PATH <node path>
//   close              -> CLOSED                          (closes the latch, SILENT)
//   start              -> STARTED                         (a new latch with the same id)
// Selector: started at once (no auto-requeue); LEADER when a term starts (takeLeadership is
// called), NOT_LEADER when it ends.
//   relinquish         -> RELINQUISHING                   (takeLeadership returns)
//   requeue            -> REQUEUED <true|false>
//   participants       -> PARTICIPANTS <id>,...
//   leader             -> LEADER_ID <id>
//   has                -> HAS_LEADERSHIP true|false
//   close              -> CLOSED
// Common:
//   sorted DIR LOCKNAME -> SORTED <name>,...   LockInternals.getSortedChildren with the standard
//                                              driver (LOCKNAME `rw`: the read/write lock's)
//   revoke NODEPATH     -> REVOKE_SENT          Revoker.attemptRevoke
//   exit                -> BYE

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.LockInternalsSorter;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;

public final class CuratorPeer {
    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    private static synchronized void say(String line) {
        OUT.println(line);
        OUT.flush();
    }

    private final CuratorFramework client;
    private final String kind;
    private final String[] args;

    // Locks.
    private InterProcessMutex lock;
    private InterProcessReadWriteLock readWrite;
    // Semaphore.
    private InterProcessSemaphoreV2 semaphore;
    private final ArrayDeque<Lease> leases = new ArrayDeque<>();
    private SharedCount count;
    // Latch.
    private LeaderLatch latch;
    // Selector.
    private LeaderSelector selector;
    private final LinkedBlockingQueue<Object> relinquish = new LinkedBlockingQueue<>();

    private CuratorPeer(CuratorFramework client, String kind, String[] args) {
        this.client = client;
        this.kind = kind;
        this.args = args;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: CuratorPeer mutex|read|write|semaphore|counted|latch|selector|client CONNECT ...");
            System.exit(2);
        }
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(args[1])
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        // Connection trouble goes to stderr (the test shows it when something fails).
        client.getConnectionStateListenable().addListener(
            (c, state) -> System.err.println(System.currentTimeMillis() + " connection state " + state));
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            say("ERROR not connected within 30 s");
            System.exit(1);
        }
        say("CONNECTED");
        CuratorPeer peer = new CuratorPeer(client, args[0], args);
        int status = 0;
        try {
            peer.run();
        } catch (Exception e) {
            say("ERROR " + describe(e));
            status = 1;
        } finally {
            client.close();
        }
        System.exit(status);
    }

    private void run() throws Exception {
        switch (kind) {
            case "mutex":
                lock = new InterProcessMutex(client, args[2]);
                lock.makeRevocable(l -> say("REVOCATION_REQUESTED"));
                acquireLock(-1);
                break;
            case "read":
                readWrite = new InterProcessReadWriteLock(client, args[2]);
                lock = readWrite.readLock();
                acquireLock(-1);
                break;
            case "write":
                readWrite = new InterProcessReadWriteLock(client, args[2]);
                lock = readWrite.writeLock();
                acquireLock(-1);
                break;
            case "semaphore":
                semaphore = new InterProcessSemaphoreV2(client, args[2], Integer.parseInt(args[3]));
                break;
            case "counted":
                count = new SharedCount(client, args[3], Integer.parseInt(args[4]));
                count.start();
                semaphore = new InterProcessSemaphoreV2(client, args[2], count);
                break;
            case "latch":
                startLatch();
                break;
            case "selector":
                selector = new LeaderSelector(client, args[2], new LeaderSelectorListenerAdapter() {
                    @Override
                    public void takeLeadership(CuratorFramework c) throws Exception {
                        say("LEADER");
                        try {
                            relinquish.take();
                        } finally {
                            say("NOT_LEADER");
                        }
                    }
                });
                selector.setId(args[3]);
                selector.start();
                break;
            case "client":
                break;
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] cmd = line.trim().split("\\s+");
            if (cmd.length == 0 || cmd[0].isEmpty()) {
                continue;
            }
            if (cmd[0].equals("exit")) {
                say("BYE");
                break;
            }
            try {
                command(cmd);
            } catch (Exception e) {
                say("ERROR " + describe(e));
            }
        }
        if (latch != null) {
            latch.close();
        }
        if (count != null) {
            count.close();
        }
        if (selector != null) {
            selector.close();
        }
    }

    private void command(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "sorted": {
                LockInternalsSorter sorter = cmd[2].equals("rw")
                    ? readWriteSorter()
                    : new StandardLockInternalsDriver();
                String lockName = cmd[2].equals("rw") ? "__READ__" : cmd[2];
                List<String> sorted = LockInternals.getSortedChildren(client, cmd[1], lockName, sorter);
                say("SORTED " + String.join(",", sorted));
                return;
            }
            case "revoke":
                Revoker.attemptRevoke(client, cmd[1]);
                say("REVOKE_SENT");
                return;
            default:
                break;
        }
        switch (kind) {
            case "mutex":
            case "read":
            case "write":
                lockCommand(cmd);
                break;
            case "semaphore":
            case "counted":
                semaphoreCommand(cmd);
                break;
            case "latch":
                latchCommand(cmd);
                break;
            case "selector":
                selectorCommand(cmd);
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    // ----- Locks -----

    private void acquireLock(long ms) throws Exception {
        if (ms < 0) {
            lock.acquire();
        } else if (!lock.acquire(ms, TimeUnit.MILLISECONDS)) {
            say("TIMEOUT");
            return;
        }
        say("ACQUIRED " + lockPath(lock));
    }

    private void lockCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "release":
                lock.release();
                say("RELEASED");
                break;
            case "acquire":
                acquireLock(-1);
                break;
            case "try":
                acquireLock(Long.parseLong(cmd[1]));
                break;
            case "participants":
                say("PARTICIPANTS " + String.join(",", lock.getParticipantNodes()));
                break;
            case "readlock":
                readWrite.readLock().acquire();
                say("READ_ACQUIRED " + lockPath(readWrite.readLock()));
                break;
            case "release_read":
                readWrite.readLock().release();
                say("READ_RELEASED");
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    /// The node a held InterProcessMutex owns (its `getLockPath` is protected).
    private static String lockPath(InterProcessMutex mutex) throws Exception {
        Method m = InterProcessMutex.class.getDeclaredMethod("getLockPath");
        m.setAccessible(true);
        return (String) m.invoke(mutex);
    }

    /// The read/write lock's own sorter (a private class of InterProcessReadWriteLock).
    private static LockInternalsSorter readWriteSorter() throws Exception {
        Class<?> c = Class.forName(
            "org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock$SortingLockInternalsDriver");
        for (Constructor<?> k : c.getDeclaredConstructors()) {
            if (k.getParameterCount() == 0) {
                k.setAccessible(true);
                return (LockInternalsSorter) k.newInstance();
            }
        }
        throw new IllegalStateException("no SortingLockInternalsDriver constructor");
    }

    // ----- Semaphore -----

    private void semaphoreCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "acquire": {
                Lease lease = semaphore.acquire();
                synchronized (leases) {
                    leases.add(lease);
                }
                say("LEASE " + leasePath(lease));
                break;
            }
            case "try": {
                Lease lease = semaphore.acquire(Long.parseLong(cmd[1]), TimeUnit.MILLISECONDS);
                if (lease == null) {
                    say("TIMEOUT");
                } else {
                    synchronized (leases) {
                        leases.add(lease);
                    }
                    say("LEASE " + leasePath(lease));
                }
                break;
            }
            case "release": {
                Lease lease;
                synchronized (leases) {
                    lease = leases.poll();
                }
                if (lease == null) {
                    say("ERROR no lease held");
                } else {
                    semaphore.returnLease(lease);
                    say("RELEASED");
                }
                break;
            }
            case "participants":
                say("PARTICIPANTS " + String.join(",", semaphore.getParticipantNodes()));
                break;
            case "setcount":
                count.setCount(Integer.parseInt(cmd[1]));
                say("COUNT_SET");
                break;
            case "count":
                say("COUNT " + count.getCount());
                break;
            case "stress":
                stress(Integer.parseInt(cmd[1]), Integer.parseInt(cmd[2]), cmd[3], Integer.parseInt(cmd[4]));
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    private String leasePath(Lease lease) {
        return args[2] + "/leases/" + lease.getNodeName();
    }

    private void stress(int threads, int rounds, String markers, int max) throws Exception {
        AtomicInteger most = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        List<Exception> failures = new ArrayList<>();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        Lease lease = semaphore.acquire(60, TimeUnit.SECONDS);
                        if (lease == null) {
                            throw new IllegalStateException("no lease within 60 s");
                        }
                        try {
                            // Protected: a create retried after a connection loss leaves
                            // no second marker behind.
                            String marker = client.create()
                                .withProtection()
                                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                                .forPath(markers + "/java-");
                            List<String> holders = client.getChildren().forPath(markers);
                            most.accumulateAndGet(holders.size(), Math::max);
                            if (holders.size() > max) {
                                violations.incrementAndGet();
                                System.err.println(System.currentTimeMillis() + " violation: markers "
                                    + holders + ", leases " + semaphore.getParticipantNodes()
                                    + ", our lease " + lease.getNodeName());
                            }
                            Thread.sleep(ThreadLocalRandom.current().nextInt(1, 6));
                            client.delete().forPath(marker);
                        } finally {
                            semaphore.returnLease(lease);
                        }
                    }
                } catch (Exception e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            thread.start();
            running.add(thread);
        }
        for (Thread thread : running) {
            thread.join();
        }
        if (!failures.isEmpty()) {
            say("ERROR stress: " + describe(failures.get(0)));
            return;
        }
        String line = "STRESS_DONE " + most.get();
        if (violations.get() > 0) {
            line += " VIOLATIONS " + violations.get();
        }
        say(line);
    }

    // ----- Latch -----

    private void startLatch() throws Exception {
        LeaderLatch l = new LeaderLatch(client, args[2], args[3]);
        l.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                say("LEADER");
            }

            @Override
            public void notLeader() {
                say("NOT_LEADER");
            }
        });
        l.start();
        latch = l;
    }

    private void latchCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "participants": {
                Collection<Participant> all = latch.getParticipants();
                List<String> ids = new ArrayList<>();
                for (Participant p : all) {
                    ids.add(p.getId());
                }
                say("PARTICIPANTS " + String.join(",", ids));
                break;
            }
            case "leader":
                say("LEADER_ID " + latch.getLeader().getId());
                break;
            case "has":
                say("HAS_LEADERSHIP " + latch.hasLeadership());
                break;
            case "path":
                say("OUR_PATH " + latch.getOurPath());
                break;
            case "close":
                latch.close();
                say("CLOSED");
                break;
            case "start":
                startLatch();
                say("STARTED");
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    // ----- Selector -----

    private void selectorCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "relinquish":
                relinquish.put(Boolean.TRUE);
                say("RELINQUISHING");
                break;
            case "requeue":
                say("REQUEUED " + selector.requeue());
                break;
            case "participants": {
                List<String> ids = new ArrayList<>();
                for (Participant p : selector.getParticipants()) {
                    ids.add(p.getId());
                }
                say("PARTICIPANTS " + String.join(",", ids));
                break;
            }
            case "leader":
                say("LEADER_ID " + selector.getLeader().getId());
                break;
            case "has":
                say("HAS_LEADERSHIP " + selector.hasLeadership());
                break;
            case "close":
                selector.close();
                selector = null;
                say("CLOSED");
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    private static String describe(Throwable e) {
        String message = e.toString().replace('\n', ' ');
        return e.getCause() != null ? message + " caused by " + e.getCause().toString().replace('\n', ' ') : message;
    }
}
