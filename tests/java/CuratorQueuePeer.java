// A peer driven over stdin/stdout that runs Apache Curator's own queues, so the Rust queues can
// be tested against the real thing (tests/curator_queues.rs compiles it against Debian's
// Curator 5.4.0 jars; recipes/benches/queue_throughput.rs runs its bench command).
//
//   java CuratorQueuePeer CONNECT
//
// Protocol: one command per line on stdin, answers on stdout (UTF-8, one line each, flushed).
// The first line is `CONNECTED`. Errors are answered with `ERROR <message>`. Item bytes are
// written as lower-case hex, `_` for an empty item. KIND is queue, id, priority or delay;
// ARG is the id, the priority or the due time (ms since the epoch) for those kinds.
//
//   put KIND PATH HEX [ARG]           -> PUT                put (putInBackground false)
//   putmulti KIND PATH HEX,HEX.. [ARG]-> PUT                putMulti (not for id queues)
//   remove PATH ID                    -> REMOVED <n>        DistributedIdQueue.remove
//   consume KIND PATH LOCK|- FAIL|-   -> CONSUMING          starts a consumer; from then on it
//                                                           prints ITEM <hex> per item, and
//                                                           FAILED <hex> (then throws) the
//                                                           first time it gets item FAIL
//   stop                              -> STOPPED            closes the consumer
//   offer PATH HEX                    -> OFFERED            SimpleDistributedQueue
//   take PATH                         -> TAKEN <hex>
//   poll PATH MS                      -> POLLED <hex> | POLLED NONE
//   peek PATH                         -> PEEKED <hex> | PEEKED NONE
//   bench queue|simple PATH PRODUCERS CONSUMERS ITEMS BYTES [paced]
//                                     -> BENCH items <n> seconds <s> items_per_s <r>
//                                        p50_us <a> p99_us <b> duplicates <d> lost <l>
//        each producer and consumer on a session of its own, all in this JVM (System.nanoTime
//        stamps in each item); producers use Curator's defaults (DistributedQueue: put in the
//        background; SimpleDistributedQueue: offer, which waits for the create); `paced`: a
//        producer puts its next item only once an item was taken (one in flight)
//   exit                              -> BYE

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.MultiItem;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorQueuePeer {
    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    private static synchronized void say(String line) {
        OUT.println(line);
        OUT.flush();
    }

    /// Items are bytes, as they are.
    private static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
        @Override
        public byte[] serialize(byte[] item) {
            return item;
        }

        @Override
        public byte[] deserialize(byte[] bytes) {
            return bytes;
        }
    };

    private final String connect;
    private final CuratorFramework client;
    /// Producer-only queues by KIND + PATH (Curator needs start() before put).
    private final Map<String, AutoCloseable> producers = new HashMap<>();
    private AutoCloseable consumer;

    private CuratorQueuePeer(String connect, CuratorFramework client) {
        this.connect = connect;
        this.client = client;
    }

    private static CuratorFramework newClient(String connect) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(connect)
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected within 30 s");
        }
        return client;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: CuratorQueuePeer CONNECT");
            System.exit(2);
        }
        CuratorFramework client;
        try {
            client = newClient(args[0]);
        } catch (Exception e) {
            say("ERROR " + describe(e));
            System.exit(1);
            return;
        }
        client.getConnectionStateListenable().addListener(
            (c, state) -> System.err.println(System.currentTimeMillis() + " connection state " + state));
        say("CONNECTED");
        CuratorQueuePeer peer = new CuratorQueuePeer(args[0], client);
        int status = 0;
        try {
            peer.run();
        } catch (Exception e) {
            say("ERROR " + describe(e));
            status = 1;
        } finally {
            peer.closeAll();
            client.close();
        }
        System.exit(status);
    }

    private void run() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] cmd = line.trim().split("\\s+");
            if (cmd.length == 0 || cmd[0].isEmpty()) {
                continue;
            }
            if (cmd[0].equals("exit")) {
                closeAll();
                say("BYE");
                break;
            }
            try {
                command(cmd);
            } catch (Exception e) {
                say("ERROR " + describe(e));
            }
        }
    }

    private void closeAll() {
        if (consumer != null) {
            closeQuietly(consumer);
            consumer = null;
        }
        for (AutoCloseable q : producers.values()) {
            closeQuietly(q);
        }
        producers.clear();
    }

    private void command(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "put": {
                byte[] item = unhex(cmd[3]);
                String arg = cmd.length > 4 ? cmd[4] : null;
                Object q = producer(cmd[1], cmd[2]);
                switch (cmd[1]) {
                    case "queue":
                        ((DistributedQueue<byte[]>) q).put(item);
                        break;
                    case "id":
                        ((DistributedIdQueue<byte[]>) q).put(item, arg);
                        break;
                    case "priority":
                        ((DistributedPriorityQueue<byte[]>) q).put(item, Integer.parseInt(arg));
                        break;
                    case "delay":
                        ((DistributedDelayQueue<byte[]>) q).put(item, Long.parseLong(arg));
                        break;
                    default:
                        throw new IllegalArgumentException("unknown kind " + cmd[1]);
                }
                say("PUT");
                return;
            }
            case "putmulti": {
                List<byte[]> items = new ArrayList<>();
                for (String h : cmd[3].split(",")) {
                    items.add(unhex(h));
                }
                Iterator<byte[]> it = items.iterator();
                MultiItem<byte[]> multi = () -> it.hasNext() ? it.next() : null;
                String arg = cmd.length > 4 ? cmd[4] : null;
                Object q = producer(cmd[1], cmd[2]);
                switch (cmd[1]) {
                    case "queue":
                        ((DistributedQueue<byte[]>) q).putMulti(multi);
                        break;
                    case "priority":
                        ((DistributedPriorityQueue<byte[]>) q).putMulti(multi, Integer.parseInt(arg));
                        break;
                    case "delay":
                        ((DistributedDelayQueue<byte[]>) q).putMulti(multi, Long.parseLong(arg));
                        break;
                    default:
                        throw new IllegalArgumentException("no putMulti for " + cmd[1]);
                }
                say("PUT");
                return;
            }
            case "remove": {
                DistributedIdQueue<byte[]> q = (DistributedIdQueue<byte[]>) producer("id", cmd[1]);
                say("REMOVED " + q.remove(cmd[2]));
                return;
            }
            case "consume": {
                if (consumer != null) {
                    throw new IllegalStateException("a consumer is running");
                }
                String lock = cmd[3].equals("-") ? null : cmd[3];
                String fail = cmd[4].equals("-") ? null : cmd[4];
                AtomicBoolean failed = new AtomicBoolean(false);
                QueueConsumer<byte[]> handler = new QueueConsumer<byte[]>() {
                    @Override
                    public void consumeMessage(byte[] message) throws Exception {
                        String h = hex(message);
                        if (h.equals(fail) && failed.compareAndSet(false, true)) {
                            say("FAILED " + h);
                            throw new Exception("failing " + h + " on purpose");
                        }
                        say("ITEM " + h);
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState s) {
                    }
                };
                consumer = build(client, cmd[1], cmd[2], handler, lock, false);
                say("CONSUMING");
                return;
            }
            case "stop":
                if (consumer != null) {
                    closeQuietly(consumer);
                    consumer = null;
                }
                say("STOPPED");
                return;
            case "offer":
                new SimpleDistributedQueue(client, cmd[1]).offer(unhex(cmd[2]));
                say("OFFERED");
                return;
            case "take":
                say("TAKEN " + hex(new SimpleDistributedQueue(client, cmd[1]).take()));
                return;
            case "poll": {
                byte[] b = new SimpleDistributedQueue(client, cmd[1]).poll(Long.parseLong(cmd[2]), TimeUnit.MILLISECONDS);
                say("POLLED " + (b == null ? "NONE" : hex(b)));
                return;
            }
            case "peek": {
                byte[] b = new SimpleDistributedQueue(client, cmd[1]).peek();
                say("PEEKED " + (b == null ? "NONE" : hex(b)));
                return;
            }
            case "bench":
                bench(cmd[1], cmd[2], Integer.parseInt(cmd[3]), Integer.parseInt(cmd[4]),
                    Integer.parseInt(cmd[5]), Integer.parseInt(cmd[6]),
                    cmd.length > 7 && cmd[7].equals("paced"));
                return;
            default:
                say("ERROR unknown command " + cmd[0]);
        }
    }

    /// A started queue of KIND at PATH (a consumer, or producer-only when handler is null).
    private static AutoCloseable build(CuratorFramework client, String kind, String path,
                                       QueueConsumer<byte[]> handler, String lock,
                                       boolean putInBackground) throws Exception {
        QueueBuilder<byte[]> b = QueueBuilder.builder(client, handler, BYTES, path)
            .putInBackground(putInBackground);
        if (lock != null) {
            b = b.lockPath(lock);
        }
        switch (kind) {
            case "queue": {
                DistributedQueue<byte[]> q = b.buildQueue();
                q.start();
                return q;
            }
            case "id": {
                DistributedIdQueue<byte[]> q = b.buildIdQueue();
                q.start();
                return q;
            }
            case "priority": {
                DistributedPriorityQueue<byte[]> q = b.buildPriorityQueue(1);
                q.start();
                return q;
            }
            case "delay": {
                DistributedDelayQueue<byte[]> q = b.buildDelayQueue();
                q.start();
                return q;
            }
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    private Object producer(String kind, String path) throws Exception {
        String key = kind + " " + path;
        AutoCloseable q = producers.get(key);
        if (q == null) {
            q = build(client, kind, path, null, null, false);
            producers.put(key, q);
        }
        return q;
    }

    // ----- Bench -----

    /// An item of BYTES bytes: the put time (System.nanoTime) and the item's index first.
    private static byte[] stamped(int index, int bytes) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(bytes, 12));
        b.putLong(System.nanoTime());
        b.putInt(index);
        return b.array();
    }

    private void bench(String kind, String path, int producerCount, int consumerCount, int items, int bytes,
                       boolean paced) throws Exception {
        java.util.concurrent.Semaphore taken = new java.util.concurrent.Semaphore(0);
        List<CuratorFramework> clients = new ArrayList<>();
        List<AutoCloseable> queues = new ArrayList<>();
        AtomicIntegerArray seen = new AtomicIntegerArray(items);
        long[] latency = new long[items];
        AtomicInteger received = new AtomicInteger();
        AtomicLong lastReceived = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean(false);
        List<Thread> threads = new ArrayList<>();
        // One handler for every received item.
        java.util.function.Consumer<byte[]> record = message -> {
            long now = System.nanoTime();
            ByteBuffer b = ByteBuffer.wrap(message);
            long sent = b.getLong();
            int index = b.getInt();
            if (seen.getAndIncrement(index) == 0) {
                latency[index] = now - sent;
            }
            lastReceived.accumulateAndGet(now, Math::max);
            if (received.incrementAndGet() >= items) {
                done.countDown();
            }
            taken.release();
        };
        try {
            List<CuratorFramework> consumerClients = new ArrayList<>();
            List<CuratorFramework> producerClients = new ArrayList<>();
            for (int i = 0; i < consumerCount; i++) {
                CuratorFramework c = newClient(connect);
                clients.add(c);
                consumerClients.add(c);
            }
            for (int i = 0; i < producerCount; i++) {
                CuratorFramework c = newClient(connect);
                clients.add(c);
                producerClients.add(c);
            }
            List<Object> producerQueues = new ArrayList<>();
            if (kind.equals("queue")) {
                QueueConsumer<byte[]> handler = new QueueConsumer<byte[]>() {
                    @Override
                    public void consumeMessage(byte[] message) {
                        record.accept(message);
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState s) {
                    }
                };
                for (CuratorFramework c : consumerClients) {
                    queues.add(build(c, "queue", path, handler, null, true));
                }
                for (CuratorFramework c : producerClients) {
                    // Curator's default: puts go out in the background.
                    AutoCloseable q = build(c, "queue", path, null, null, true);
                    queues.add(q);
                    producerQueues.add(q);
                }
            } else if (kind.equals("simple")) {
                for (CuratorFramework c : consumerClients) {
                    SimpleDistributedQueue q = new SimpleDistributedQueue(c, path);
                    Thread t = new Thread(() -> {
                        try {
                            while (!stop.get()) {
                                byte[] m = q.poll(100, TimeUnit.MILLISECONDS);
                                if (m != null) {
                                    record.accept(m);
                                }
                            }
                        } catch (Exception e) {
                            System.err.println("consumer: " + describe(e));
                        }
                    });
                    t.start();
                    threads.add(t);
                }
                for (CuratorFramework c : producerClients) {
                    producerQueues.add(new SimpleDistributedQueue(c, path));
                }
            } else {
                throw new IllegalArgumentException("bench queue|simple, not " + kind);
            }
            long start = System.nanoTime();
            List<Thread> producerThreads = new ArrayList<>();
            AtomicInteger producerErrors = new AtomicInteger();
            for (int p = 0; p < producerCount; p++) {
                Object q = producerQueues.get(p);
                int first = p;
                Thread t = new Thread(() -> {
                    try {
                        for (int i = first; i < items; i += producerCount) {
                            byte[] item = stamped(i, bytes);
                            if (q instanceof DistributedQueue) {
                                ((DistributedQueue<byte[]>) q).put(item);
                            } else {
                                ((SimpleDistributedQueue) q).offer(item);
                            }
                            if (paced) {
                                taken.acquire();
                            }
                        }
                    } catch (Exception e) {
                        producerErrors.incrementAndGet();
                        System.err.println("producer: " + describe(e));
                    }
                });
                t.start();
                producerThreads.add(t);
            }
            for (Thread t : producerThreads) {
                t.join();
            }
            boolean finished = done.await(600, TimeUnit.SECONDS);
            long end = lastReceived.get();
            stop.set(true);
            for (Thread t : threads) {
                t.join(5000);
            }
            if (!finished || producerErrors.get() > 0) {
                say("ERROR bench: " + received.get() + " of " + items + " received, "
                    + producerErrors.get() + " producer errors");
                return;
            }
            int duplicates = 0;
            int lost = 0;
            for (int i = 0; i < items; i++) {
                int n = seen.get(i);
                if (n == 0) {
                    lost++;
                } else if (n > 1) {
                    duplicates += n - 1;
                }
            }
            long[] sorted = latency.clone();
            Arrays.sort(sorted);
            double seconds = (end - start) / 1e9;
            say(String.format("BENCH items %d seconds %.3f items_per_s %.0f p50_us %d p99_us %d duplicates %d lost %d",
                items, seconds, items / seconds, sorted[items / 2] / 1000,
                sorted[Math.min(items - 1, (int) (items * 0.99))] / 1000, duplicates, lost));
        } finally {
            stop.set(true);
            for (AutoCloseable q : queues) {
                closeQuietly(q);
            }
            for (CuratorFramework c : clients) {
                c.close();
            }
        }
    }

    // ----- Helpers -----

    private static String hex(byte[] bytes) {
        if (bytes.length == 0) {
            return "_";
        }
        StringBuilder s = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            s.append(String.format("%02x", b & 0xff));
        }
        return s.toString();
    }

    private static byte[] unhex(String h) {
        if (h.equals("_")) {
            return new byte[0];
        }
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            System.err.println("close: " + describe(e));
        }
    }

    private static String describe(Throwable e) {
        String message = e.toString().replace('\n', ' ');
        return e.getCause() != null ? message + " caused by " + e.getCause().toString().replace('\n', ' ') : message;
    }
}
