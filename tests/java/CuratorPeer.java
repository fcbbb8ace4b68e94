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
//   java CuratorPeer cache     CONNECT ROOT NODE     Curator's caches: a CuratorCache on ROOT (on a
//                                                    session of its own, ZOOKEEPER-4466), a
//                                                    PathChildrenCache on ROOT (with data) and a
//                                                    NodeCache on NODE; CACHES_READY once built
//   java CuratorPeer sharedcount CONNECT PATH SEED  SharedCount (started; its listener prints
//                                                    COUNT_CHANGED <n> on every change it tells)
//   java CuratorPeer atomic    CONNECT PATH RETRIES [LOCKPATH LOCKMS]
//                                                    DistributedAtomicLong, RetryNTimes(RETRIES, 0);
//                                                    with LOCKPATH: PromotedToLock there, waiting
//                                                    at most LOCKMS, RetryNTimes(3, 0) under it
//   java CuratorPeer doublebarrier CONNECT PATH N    DistributedDoubleBarrier for N members (a new
//                                                    one on every enter)
//   java CuratorPeer member    CONNECT PATH ID HEX   GroupMember ID with data HEX (started at once)
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
// Caches (a node is `path:czxid:mzxid:version:hex of the data`, nodes sorted by path):
//   view               -> VIEW <node>,...                 (CuratorCache, the root included)
//   children           -> CHILDREN <node>,...             (PathChildrenCache.getCurrentData)
//   node               -> NODE [<node>]                   (NodeCache.getCurrentData; empty: none)
// SharedCount (a value is `<count>@<version>`):
//   get                -> COUNT <n>@<version>             (getVersionedValue)
//   set N              -> SET                             (setCount)
//   tryset N           -> TRYSET true|false               (trySetCount(getVersionedValue(), N))
//   mark               -> MARKED <n>@<version>            (keeps getVersionedValue() ...)
//   trysetmarked N     -> TRYSET true|false               (... for trySetCount(marked, N))
// SharedCount and atomic, concurrent writers:
//   incr SESSIONS N GATE -> ARMED, later INCREMENTED <failed tries> <promoted ops>
//                         SESSIONS new sessions, each with its own SharedCount (or
//                         DistributedAtomicLong, same settings) on PATH in a thread of its own,
//                         ARMED once each waits for GATE to exist (an exists watch); then each
//                         adds 1, N times: a SharedCount with trySetCount(getVersionedValue(),
//                         n + 1) until true, an atomic with increment() until it succeeds.
//                         Failed tries: false trySetCounts, or increment() calls not done by
//                         their first (optimistic) try; promoted ops: increment() calls that
//                         tried under the promoted lock (atomic only)
// Atomic:
//   get                -> VALUE <n>
//   add N              -> ADDED <succeeded> <pre> <post> <optimistic tries> <promoted tries>
//                               <promoted ms>
// Double barrier:
//   enter MS           -> ENTERED <member>,... | ENTER_TIMEOUT   (members: the children of PATH
//                                                               but `ready`, listed on return)
//   leave MS           -> LEFT <member>,... | LEAVE_TIMEOUT      (the same, on return)
// Group member (a member is `<id>=<hex of its data>`, `-` for none, sorted by id):
//   members            -> MEMBERS <member>,...             (getCurrentMembers)
//   members_until MS MEMBER,...
//                      -> MEMBERS <member>,...             getCurrentMembers polled every 10 ms
//                                                          until it is the list given or MS
//                                                          passed: the last one seen
//   setdata HEX        -> DATA_SET                         (setThisData)
//   close              -> CLOSED                           (leaves the group)
// Common:
//   sorted DIR LOCKNAME -> SORTED <name>,...   LockInternals.getSortedChildren with the standard
//                                              driver (LOCKNAME `rw`: the read/write lock's)
//   revoke NODEPATH     -> REVOKE_SENT          Revoker.attemptRevoke
//   ops OP...           -> DONE <n>             writes through Curator, back to back, each op:
//                                               create PATH HEX (creatingParentsIfNeeded),
//                                               set PATH HEX, delete PATH
//                                               (deletingChildrenIfNeeded), replace PATH HEX
//                                               (delete + create in one transaction), prune
//                                               PATH (the subtree deleted in one transaction);
//                                               HEX `-` is empty data
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
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.NodeCache;
import org.apache.curator.framework.recipes.cache.PathChildrenCache;
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
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.ZKPaths;
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
    // Caches.
    private CuratorFramework cacheClient;
    private CuratorCache curatorCache;
    private PathChildrenCache childrenCache;
    private NodeCache nodeCache;
    // Shared count (`count` above: the counted semaphore's).
    private VersionedValue<Integer> marked;
    // Atomic.
    private DistributedAtomicLong atomic;
    // Double barrier.
    private DistributedDoubleBarrier barrier;
    // Group member.
    private GroupMember member;

    private CuratorPeer(CuratorFramework client, String kind, String[] args) {
        this.client = client;
        this.kind = kind;
        this.args = args;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: CuratorPeer mutex|read|write|semaphore|counted|latch|selector|cache|sharedcount|atomic|doublebarrier|member|client CONNECT ...");
            System.exit(2);
        }
        CuratorFramework client = connect(args[1]);
        if (client == null) {
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

    /// A started client, connected; null if not within 30 s.
    private static CuratorFramework connect(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        // Connection trouble goes to stderr (the test shows it when something fails).
        client.getConnectionStateListenable().addListener(
            (c, state) -> System.err.println(System.currentTimeMillis() + " connection state " + state));
        client.start();
        return client.blockUntilConnected(30, TimeUnit.SECONDS) ? client : null;
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
            case "cache":
                startCaches(args[2], args[3]);
                break;
            case "sharedcount":
                count = new SharedCount(client, args[2], Integer.parseInt(args[3]));
                count.addListener(new SharedCountListener() {
                    @Override
                    public void countHasChanged(SharedCountReader reader, int newCount) {
                        say("COUNT_CHANGED " + newCount);
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState state) {
                    }
                });
                count.start();
                break;
            case "atomic":
                atomic = newAtomic(client);
                break;
            case "doublebarrier":
                break;
            case "member":
                member = new GroupMember(client, args[2], args[3], unhex(args[4]));
                member.start();
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
        if (member != null) {
            member.close();
        }
        if (curatorCache != null) {
            curatorCache.close();
            childrenCache.close();
            nodeCache.close();
            cacheClient.close();
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
            case "ops":
                say("DONE " + ops(cmd));
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
            case "cache":
                cacheCommand(cmd);
                break;
            case "sharedcount":
                sharedCountCommand(cmd);
                break;
            case "atomic":
                atomicCommand(cmd);
                break;
            case "doublebarrier":
                barrierCommand(cmd);
                break;
            case "member":
                memberCommand(cmd);
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

    // ----- Caches -----

    private void startCaches(String root, String node) throws Exception {
        cacheClient = connect(args[1]);
        if (cacheClient == null) {
            throw new IllegalStateException("cache session not connected within 30 s");
        }
        CountDownLatch initialized = new CountDownLatch(1);
        curatorCache = CuratorCache.build(cacheClient, root);
        curatorCache.listenable().addListener(
            CuratorCacheListener.builder().forInitialized(initialized::countDown).build());
        curatorCache.start();
        childrenCache = new PathChildrenCache(client, root, true);
        childrenCache.start(PathChildrenCache.StartMode.BUILD_INITIAL_CACHE);
        nodeCache = new NodeCache(client, node);
        nodeCache.start(true);
        if (!initialized.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("CuratorCache not initialized within 30 s");
        }
        say("CACHES_READY");
    }

    private void cacheCommand(String[] cmd) {
        switch (cmd[0]) {
            case "view":
                say("VIEW " + nodes(curatorCache.stream()));
                break;
            case "children":
                say("CHILDREN " + nodes(childrenCache.getCurrentData().stream()));
                break;
            case "node": {
                ChildData data = nodeCache.getCurrentData();
                say("NODE " + (data == null ? "" : node(data)));
                break;
            }
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    private static String nodes(Stream<ChildData> all) {
        return all.sorted(Comparator.comparing(ChildData::getPath))
            .map(CuratorPeer::node)
            .collect(Collectors.joining(","));
    }

    private static String node(ChildData d) {
        StringBuilder s = new StringBuilder(d.getPath()).append(':')
            .append(d.getStat().getCzxid()).append(':')
            .append(d.getStat().getMzxid()).append(':')
            .append(d.getStat().getVersion()).append(':');
        if (d.getData() != null) {
            for (byte b : d.getData()) {
                s.append(String.format("%02x", b & 0xff));
            }
        }
        return s.toString();
    }

    // ----- Shared count -----

    private void sharedCountCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "get":
                say("COUNT " + versioned(count.getVersionedValue()));
                break;
            case "set":
                count.setCount(Integer.parseInt(cmd[1]));
                say("SET");
                break;
            case "tryset":
                say("TRYSET " + count.trySetCount(count.getVersionedValue(), Integer.parseInt(cmd[1])));
                break;
            case "mark":
                marked = count.getVersionedValue();
                say("MARKED " + versioned(marked));
                break;
            case "trysetmarked":
                say("TRYSET " + count.trySetCount(marked, Integer.parseInt(cmd[1])));
                break;
            case "incr":
                increments(Integer.parseInt(cmd[1]), Integer.parseInt(cmd[2]), cmd[3]);
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    private static String versioned(VersionedValue<Integer> v) {
        return v.getValue() + "@" + v.getVersion();
    }

    /// One writer of `incr`: adds 1, `n` times; returns {failed tries, promoted ops}.
    private interface Writer {
        int[] run(int n) throws Exception;
    }

    /// The `incr` command (shared count or atomic): `sessions` writers, each on a session of
    /// its own, start together once `gate` exists.
    private void increments(int sessions, int n, String gate) throws Exception {
        List<CuratorFramework> clients = new ArrayList<>();
        List<Writer> writers = new ArrayList<>();
        List<SharedCount> counts = new ArrayList<>();
        try {
            for (int i = 0; i < sessions; i++) {
                CuratorFramework c = connect(args[1]);
                if (c == null) {
                    throw new IllegalStateException("writer session not connected within 30 s");
                }
                clients.add(c);
                if (kind.equals("sharedcount")) {
                    SharedCount mine = new SharedCount(c, args[2], 0);
                    mine.start();
                    counts.add(mine);
                    writers.add(k -> {
                        int failed = 0;
                        for (int j = 0; j < k; j++) {
                            while (true) {
                                VersionedValue<Integer> seen = mine.getVersionedValue();
                                if (mine.trySetCount(seen, seen.getValue() + 1)) {
                                    break;
                                }
                                failed++;
                            }
                        }
                        return new int[] {failed, 0};
                    });
                } else {
                    DistributedAtomicLong mine = newAtomic(c);
                    writers.add(k -> {
                        int failed = 0;
                        int promoted = 0;
                        for (int j = 0; j < k; j++) {
                            while (true) {
                                AtomicValue<Long> r = mine.increment();
                                if (r.getStats().getPromotedLockTries() > 0) {
                                    promoted++;
                                }
                                boolean firstTry = r.getStats().getOptimisticTries() == 1
                                    && r.getStats().getPromotedLockTries() == 0;
                                if (!(r.succeeded() && firstTry)) {
                                    failed++;
                                }
                                if (r.succeeded()) {
                                    break;
                                }
                            }
                        }
                        return new int[] {failed, promoted};
                    });
                }
            }
            CountDownLatch open = new CountDownLatch(1);
            CuratorWatcher opened = event -> open.countDown();
            if (client.checkExists().usingWatcher(opened).forPath(gate) != null) {
                open.countDown();
            }
            AtomicInteger failed = new AtomicInteger();
            AtomicInteger promoted = new AtomicInteger();
            List<Exception> failures = new ArrayList<>();
            List<Thread> running = new ArrayList<>();
            for (Writer writer : writers) {
                Thread thread = new Thread(() -> {
                    try {
                        if (!open.await(60, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("the gate did not open within 60 s");
                        }
                        int[] r = writer.run(n);
                        failed.addAndGet(r[0]);
                        promoted.addAndGet(r[1]);
                    } catch (Exception e) {
                        synchronized (failures) {
                            failures.add(e);
                        }
                    }
                });
                thread.start();
                running.add(thread);
            }
            say("ARMED");
            for (Thread thread : running) {
                thread.join();
            }
            if (!failures.isEmpty()) {
                say("ERROR incr: " + describe(failures.get(0)));
                return;
            }
            say("INCREMENTED " + failed.get() + " " + promoted.get());
        } finally {
            for (SharedCount c : counts) {
                c.close();
            }
            for (CuratorFramework c : clients) {
                c.close();
            }
        }
    }

    // ----- Atomic -----

    /// The kind's DistributedAtomicLong on `c`.
    private DistributedAtomicLong newAtomic(CuratorFramework c) {
        RetryNTimes optimistic = new RetryNTimes(Integer.parseInt(args[3]), 0);
        if (args.length < 6) {
            return new DistributedAtomicLong(c, args[2], optimistic);
        }
        PromotedToLock promoted = PromotedToLock.builder()
            .lockPath(args[4])
            .timeout(Long.parseLong(args[5]), TimeUnit.MILLISECONDS)
            .retryPolicy(new RetryNTimes(3, 0))
            .build();
        return new DistributedAtomicLong(c, args[2], optimistic, promoted);
    }

    private void atomicCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "get": {
                AtomicValue<Long> r = atomic.get();
                if (!r.succeeded()) {
                    say("ERROR get did not succeed");
                } else {
                    say("VALUE " + r.postValue());
                }
                break;
            }
            case "add": {
                AtomicValue<Long> r = atomic.add(Long.parseLong(cmd[1]));
                say("ADDED " + r.succeeded() + " " + r.preValue() + " " + r.postValue() + " "
                    + r.getStats().getOptimisticTries() + " " + r.getStats().getPromotedLockTries()
                    + " " + r.getStats().getPromotedTimeMs());
                break;
            }
            case "incr":
                increments(Integer.parseInt(cmd[1]), Integer.parseInt(cmd[2]), cmd[3]);
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    // ----- Double barrier -----

    private void barrierCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "enter":
                barrier = new DistributedDoubleBarrier(client, args[2], Integer.parseInt(args[3]));
                if (barrier.enter(Long.parseLong(cmd[1]), TimeUnit.MILLISECONDS)) {
                    say("ENTERED " + barrierMembers());
                } else {
                    say("ENTER_TIMEOUT");
                }
                break;
            case "leave":
                if (barrier.leave(Long.parseLong(cmd[1]), TimeUnit.MILLISECONDS)) {
                    say("LEFT " + barrierMembers());
                } else {
                    say("LEAVE_TIMEOUT");
                }
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    /// The barrier's members now: its children but `ready`, sorted.
    private String barrierMembers() throws Exception {
        List<String> members = new ArrayList<>();
        if (client.checkExists().forPath(args[2]) != null) {
            for (String child : client.getChildren().forPath(args[2])) {
                if (!child.equals("ready")) {
                    members.add(child);
                }
            }
        }
        members.sort(null);
        return String.join(",", members);
    }

    // ----- Group member -----

    private void memberCommand(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "members":
                say("MEMBERS " + members());
                break;
            case "members_until": {
                long deadline = System.currentTimeMillis() + Long.parseLong(cmd[1]);
                String want = cmd.length > 2 ? cmd[2] : "";
                String seen = members();
                while (!seen.equals(want) && System.currentTimeMillis() < deadline) {
                    Thread.sleep(10);
                    seen = members();
                }
                say("MEMBERS " + seen);
                break;
            }
            case "setdata":
                member.setThisData(unhex(cmd[1]));
                say("DATA_SET");
                break;
            case "close":
                member.close();
                member = null;
                say("CLOSED");
                break;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    /// getCurrentMembers as `<id>=<hex>,...`, sorted by id.
    private String members() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, byte[]> m : new TreeMap<>(member.getCurrentMembers()).entrySet()) {
            byte[] data = m.getValue();
            out.add(m.getKey() + "=" + (data == null ? "null" : data.length == 0 ? "-" : hex(data)));
        }
        return String.join(",", out);
    }

    private static String hex(byte[] data) {
        StringBuilder s = new StringBuilder();
        for (byte b : data) {
            s.append(String.format("%02x", b & 0xff));
        }
        return s.toString();
    }

    /// Runs `ops OP...` (see the header) back to back; returns how many ran.
    private int ops(String[] cmd) throws Exception {
        int n = 0;
        int i = 1;
        while (i < cmd.length) {
            String op = cmd[i++];
            String path = cmd[i++];
            switch (op) {
                case "create":
                    client.create().creatingParentsIfNeeded().forPath(path, unhex(cmd[i++]));
                    break;
                case "set":
                    client.setData().forPath(path, unhex(cmd[i++]));
                    break;
                case "delete":
                    client.delete().deletingChildrenIfNeeded().forPath(path);
                    break;
                case "replace": {
                    byte[] data = unhex(cmd[i++]);
                    client.transaction().forOperations(
                        client.transactionOp().delete().forPath(path),
                        client.transactionOp().create().forPath(path, data));
                    break;
                }
                case "prune": {
                    List<String> subtree = new ArrayList<>();
                    subtree(path, subtree);
                    List<CuratorOp> deletes = new ArrayList<>();
                    for (int k = subtree.size() - 1; k >= 0; k--) {
                        deletes.add(client.transactionOp().delete().forPath(subtree.get(k)));
                    }
                    client.transaction().forOperations(deletes);
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown op " + op + " (after " + n + " ops)");
            }
            n++;
        }
        return n;
    }

    /// `path` and everything below it, parents before children.
    private void subtree(String path, List<String> out) throws Exception {
        out.add(path);
        for (String child : client.getChildren().forPath(path)) {
            subtree(ZKPaths.makePath(path, child), out);
        }
    }

    private static byte[] unhex(String hex) {
        if (hex.equals("-")) {
            return new byte[0];
        }
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static String describe(Throwable e) {
        String message = e.toString().replace('\n', ' ');
        return e.getCause() != null ? message + " caused by " + e.getCause().toString().replace('\n', ' ') : message;
    }
}
