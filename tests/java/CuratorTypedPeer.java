// A peer driven over stdin/stdout that reads and writes modeled nodes with Apache Curator's own
// ModeledFramework (curator-x-async: ModelSpec, ZPath.parseWithIds, JacksonModelSerializer,
// versioned(), cached()), for tests/curator_typed.rs (compiled with the other peers by
// tests/support, against Curator 5.9.0 or 5.4.0: only API both have is used here).
//
//   java CuratorTypedPeer CONNECT
//
// Protocol: as CuratorPeer's (the first line is `CONNECTED`; one answer line per command;
// `ERROR <exception class>: <message>` when a command fails, and the peer keeps going).
//
// The model is CuratorTypedPeer$Model, a plain POJO written and read by
// `JacksonModelSerializer.build(Model.class)`, Curator's default mapper: public fields
// name (String), count (int), last (String), note (String, may be null), declared in the
// order of the Rust test's struct. On the line a model is four tokens, FIELDS:
//   NAME COUNT LAST NOTE
// each text `x<hex of its UTF-8>` (`x` alone is the empty text) or `-` for null, COUNT decimal.
//
//   session                   -> SESSION <hex>       this client's session id
//   set TEMPLATE ID MODE FIELDS
//                             -> SET <path>          ModeledFramework.set(model) on
//                                                    ModelSpec.builder(ZPath.parseWithIds(TEMPLATE))
//                                                    .withCreateMode(MODE) (a CreateMode name)
//                                                    .resolved(ID) (ID `-`: TEMPLATE has no
//                                                    parameter); Curator's default create
//                                                    options: parents as containers, setData if
//                                                    the node exists
//   read PATH                 -> MODEL FIELDS <version> <ephemeralOwner hex> | NONODE
//                                                    readAsZNode()
//   update PATH VERSION FIELDS
//                             -> UPDATED <version> | CONFLICT
//                                                    versioned().update(Versioned.from(model,
//                                                    VERSION)): setData over VERSION
//   hold PATH                 -> HELD FIELDS <version>
//                                                    versioned().read(), kept for `finish`
//   finish NAME               -> BUMPED <tries> <version>
//                                                    a Curator user's read-modify-write loop,
//                                                    from the model held: count + 1, name =
//                                                    NAME, versioned().update over the version
//                                                    read; on BadVersion read again and redo
//   bump PATH NAME            -> BUMPED <tries> <version>       hold PATH, then finish NAME
//   bumps PATH NAME N         -> BUMPED_ALL <tries> <version>   N bumps, one after the other;
//                                                    tries summed (the Rust test updates the
//                                                    same node meanwhile)
//   cache TEMPLATE            -> CACHE_READY         a CachedModeledFramework on
//                                                    ZPath.parseWithIds(TEMPLATE), started, its
//                                                    first read done (initialized())
//   cached PATH FIELDS        -> CACHED <version>    waits (20 s at most, woken by the cache's
//                                                    listener, no polling) until the cache holds
//                                                    that model at PATH
//   uncached PATH             -> UNCACHED            waits likewise until it holds nothing there
//   exit                      -> BYE

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.curator.x.async.modeled.JacksonModelSerializer;
import org.apache.curator.x.async.modeled.ModelSpec;
import org.apache.curator.x.async.modeled.ModeledFramework;
import org.apache.curator.x.async.modeled.ZNode;
import org.apache.curator.x.async.modeled.ZPath;
import org.apache.curator.x.async.modeled.cached.CachedModeledFramework;
import org.apache.curator.x.async.modeled.cached.ModeledCacheListener;
import org.apache.curator.x.async.modeled.versioned.Versioned;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public final class CuratorTypedPeer {
    /// The model: the Rust test's `Profile`, field for field, in the same order (Jackson writes
    /// a POJO's fields in their declaration order).
    public static final class Model {
        public String name;
        public int count;
        public String last;
        public String note;

        public Model() {
        }

        Model copy() {
            Model m = new Model();
            m.name = name;
            m.count = count;
            m.last = last;
            m.note = note;
            return m;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Model)) {
                return false;
            }
            Model m = (Model) o;
            return Objects.equals(name, m.name) && count == m.count && Objects.equals(last, m.last)
                && Objects.equals(note, m.note);
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, count, last, note);
        }
    }

    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    private static final JacksonModelSerializer<Model> SERIALIZER = JacksonModelSerializer.build(Model.class);
    /// How long one command may wait on Curator: less than the Rust test's deadline (30 s), so
    /// that the peer's own error (what it saw) arrives first.
    private static final long WAIT_MS = 20_000;
    /// A read-modify-write loop gives up after this many tries.
    private static final int MAX_TRIES = 1000;

    private static void say(String line) {
        OUT.println(line);
        OUT.flush();
    }

    private final CuratorFramework client;
    private final AsyncCuratorFramework async;
    private CachedModeledFramework<Model> cached;
    /// Woken on every change the cache tells (and on its errors).
    private final Object cacheChanged = new Object();
    private volatile Exception cacheError;
    private String heldPath;
    private Versioned<Model> held;

    private CuratorTypedPeer(CuratorFramework client) {
        this.client = client;
        this.async = AsyncCuratorFramework.wrap(client);
    }

    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(args[0])
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            say("ERROR not connected within 30 s");
            System.exit(1);
        }
        say("CONNECTED");
        new CuratorTypedPeer(client).run();
        client.close();
        System.exit(0);
    }

    private void run() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("exit")) {
                break;
            }
            try {
                say(handle(w));
            } catch (Exception e) {
                say("ERROR " + e.getClass().getName() + ": " + e.getMessage());
            }
        }
        if (cached != null) {
            cached.close();
        }
        say("BYE");
    }

    private String handle(String[] w) throws Exception {
        switch (w[0]) {
            case "session":
                return "SESSION " + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
            case "set": {
                ModelSpec<Model> spec = ModelSpec.builder(ZPath.parseWithIds(w[1]), SERIALIZER)
                    .withCreateMode(CreateMode.valueOf(w[3]))
                    .build();
                if (!w[2].equals("-")) {
                    spec = spec.resolved(w[2]);
                }
                return "SET " + await(ModeledFramework.wrap(async, spec).set(model(w, 4)));
            }
            case "read":
                try {
                    ZNode<Model> node = await(framework(w[1]).readAsZNode());
                    return "MODEL " + fields(node.model()) + " " + node.stat().getVersion() + " "
                        + Long.toHexString(node.stat().getEphemeralOwner());
                } catch (KeeperException.NoNodeException e) {
                    return "NONODE";
                }
            case "update":
                try {
                    Versioned<Model> next = Versioned.from(model(w, 3), Integer.parseInt(w[2]));
                    return "UPDATED " + await(framework(w[1]).versioned().update(next)).getVersion();
                } catch (KeeperException.BadVersionException e) {
                    return "CONFLICT";
                }
            case "hold":
                hold(w[1]);
                return "HELD " + fields(held.model()) + " " + held.version();
            case "finish": {
                int[] result = finish(text(w[1]));
                return "BUMPED " + result[0] + " " + result[1];
            }
            case "bump": {
                hold(w[1]);
                int[] result = finish(text(w[2]));
                return "BUMPED " + result[0] + " " + result[1];
            }
            case "bumps": {
                int tries = 0;
                int version = -1;
                for (int i = 0; i < Integer.parseInt(w[3]); i++) {
                    hold(w[1]);
                    int[] result = finish(text(w[2]));
                    tries += result[0];
                    version = result[1];
                }
                return "BUMPED_ALL " + tries + " " + version;
            }
            case "cache":
                return startCache(w[1]);
            case "cached":
                return awaitCached(w[1], model(w, 2));
            case "uncached":
                return awaitCached(w[1], null);
            default:
                return "ERROR unknown command " + w[0];
        }
    }

    /// The modeled framework of one resolved path.
    private static ModelSpec<Model> spec(String path) {
        return ModelSpec.builder(ZPath.parse(path), SERIALIZER).build();
    }

    private ModeledFramework<Model> framework(String path) {
        return ModeledFramework.wrap(async, spec(path));
    }

    private void hold(String path) throws Exception {
        heldPath = path;
        held = await(framework(path).versioned().read());
    }

    /// The loop each Curator user writes (ModeledFramework has no read-modify-write): change what
    /// was read, write it over the version read, read again when someone else wrote first.
    /// Returns the tries and the version written.
    private int[] finish(String name) throws Exception {
        for (int tries = 1; tries <= MAX_TRIES; tries++) {
            Model next = held.model().copy();
            next.count += 1;
            next.name = name;
            try {
                Stat stat = await(framework(heldPath).versioned().update(Versioned.from(next, held.version())));
                return new int[] {tries, stat.getVersion()};
            } catch (KeeperException.BadVersionException e) {
                held = await(framework(heldPath).versioned().read());
            }
        }
        throw new IllegalStateException("no write went through in " + MAX_TRIES + " tries");
    }

    private String startCache(String template) throws Exception {
        ModelSpec<Model> spec = ModelSpec.builder(ZPath.parseWithIds(template), SERIALIZER).build();
        cached = ModeledFramework.wrap(async, spec).cached();
        CountDownLatch initialized = new CountDownLatch(1);
        cached.listenable().addListener(new ModeledCacheListener<Model>() {
            @Override
            public void accept(Type type, ZPath path, Stat stat, Model model) {
                synchronized (cacheChanged) {
                    cacheChanged.notifyAll();
                }
            }

            @Override
            public void initialized() {
                initialized.countDown();
            }

            @Override
            public void handleException(Exception e) {
                cacheError = e;
                synchronized (cacheChanged) {
                    cacheChanged.notifyAll();
                }
            }
        });
        cached.start();
        if (!initialized.await(WAIT_MS, TimeUnit.MILLISECONDS)) {
            return "ERROR the cache was not initialized within " + WAIT_MS + " ms";
        }
        return "CACHE_READY";
    }

    /// Waits until the cache holds `want` at `path` (nothing, for null).
    private String awaitCached(String path, Model want) throws Exception {
        ZPath zpath = ZPath.parse(path);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        synchronized (cacheChanged) {
            while (true) {
                if (cacheError != null) {
                    return "ERROR the cache failed: " + cacheError;
                }
                // The cache stores an entry before it calls the listeners: a change made
                // after this look wakes the wait below.
                Optional<ZNode<Model>> node = cached.cache().currentData(zpath);
                if (want == null && !node.isPresent()) {
                    return "UNCACHED";
                }
                if (want != null && node.isPresent() && node.get().model().equals(want)) {
                    return "CACHED " + node.get().stat().getVersion();
                }
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return "ERROR the cache holds "
                        + node.map(n -> fields(n.model()) + " " + n.stat().getVersion()).orElse("nothing")
                        + " at " + path + " after " + WAIT_MS + " ms";
                }
                cacheChanged.wait(left);
            }
        }
    }

    /// The result of a Curator stage, its cause thrown as it is (a KeeperException, say).
    private static <T> T await(AsyncStage<T> stage) throws Exception {
        try {
            return stage.toCompletableFuture().get(WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            throw e;
        } catch (TimeoutException e) {
            throw new TimeoutException("no answer from Curator within " + WAIT_MS + " ms");
        }
    }

    /// The model of FIELDS at w[from..from + 4].
    private static Model model(String[] w, int from) {
        Model m = new Model();
        m.name = text(w[from]);
        m.count = Integer.parseInt(w[from + 1]);
        m.last = text(w[from + 2]);
        m.note = text(w[from + 3]);
        return m;
    }

    private static String fields(Model m) {
        return token(m.name) + " " + m.count + " " + token(m.last) + " " + token(m.note);
    }

    private static String token(String text) {
        if (text == null) {
            return "-";
        }
        StringBuilder s = new StringBuilder("x");
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            s.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return s.toString();
    }

    private static String text(String token) {
        if (token.equals("-")) {
            return null;
        }
        if (!token.startsWith("x")) {
            throw new IllegalArgumentException("a text token is x<hex> or -: " + token);
        }
        String hex = token.substring(1);
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
