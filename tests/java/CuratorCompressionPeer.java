// A peer driven over stdin/stdout that writes and reads node data with Curator 5.4's own
// compression (`compressed()` / `decompressed()`, its default GzipCompressionProvider), for
// tests/curator_compression.rs (compiled with the other peers by tests/support).
//
//   java CuratorCompressionPeer CONNECT
//
// Protocol: as CuratorPeer's (the first line is `CONNECTED`; one answer line per command;
// `ERROR <exception class>: <message>` when a command fails, and the peer keeps going).
//   compress HEX            -> COMPRESSED <hex>    GzipCompressionProvider.compress, no server
//   create PATH HEX         -> CREATED             create().compressed().creatingParentsIfNeeded()
//   set PATH HEX            -> SET                 setData().compressed()
//   txn CPATH CHEX SPATH SHEX
//                           -> COMMITTED           one transaction: a compressed create of CPATH,
//                                                  a compressed setData of SPATH
//   get PATH                -> DATA <hex>          getData().decompressed() ("-" for empty)
//   big PATH SIZE           -> BIG <stored bytes>  create().compressed() of SIZE bytes of
//                                                  bigData (the same text the Rust test makes)
//   check PATH SIZE         -> MATCH true|false <decompressed length>
//                                                  getData().decompressed() against bigData(SIZE)
//   bomb PATH MIB           -> BOMB <stored bytes> MIB MiB of zeros gzipped (streamed, never
//                                                  held) and written as they are (not through
//                                                  compressed()): a hostile node
//   cache PATH              -> CACHE_READY         a CuratorCache on PATH with COMPRESSED_DATA
//   view                    -> VIEW <path>=<hex>,...  its nodes, sorted by path
//   exit                    -> BYE

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.GzipCompressionProvider;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorCompressionPeer {
    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    private static void say(String line) {
        OUT.println(line);
        OUT.flush();
    }

    private final CuratorFramework client;
    private CuratorCache cache;

    private CuratorCompressionPeer(CuratorFramework client) {
        this.client = client;
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
        new CuratorCompressionPeer(client).run();
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
        if (cache != null) {
            cache.close();
        }
        say("BYE");
    }

    private String handle(String[] w) throws Exception {
        switch (w[0]) {
            case "compress":
                return "COMPRESSED " + hex(new GzipCompressionProvider().compress("/", unhex(w[1])));
            case "create":
                client.create().compressed().creatingParentsIfNeeded().forPath(w[1], unhex(w[2]));
                return "CREATED";
            case "set":
                client.setData().compressed().forPath(w[1], unhex(w[2]));
                return "SET";
            case "txn": {
                CuratorOp create = client.transactionOp().create().compressed().forPath(w[1], unhex(w[2]));
                CuratorOp set = client.transactionOp().setData().compressed().forPath(w[3], unhex(w[4]));
                client.transaction().forOperations(create, set);
                return "COMMITTED";
            }
            case "get":
                return "DATA " + hex(client.getData().decompressed().forPath(w[1]));
            case "big": {
                byte[] data = bigData(Integer.parseInt(w[2]));
                client.create().compressed().creatingParentsIfNeeded().forPath(w[1], data);
                return "BIG " + client.getData().forPath(w[1]).length;
            }
            case "check": {
                byte[] found = client.getData().decompressed().forPath(w[1]);
                boolean same = Arrays.equals(found, bigData(Integer.parseInt(w[2])));
                return "MATCH " + same + " " + found.length;
            }
            case "bomb": {
                ByteArrayOutputStream gzipped = new ByteArrayOutputStream();
                try (GZIPOutputStream out = new GZIPOutputStream(gzipped)) {
                    byte[] zeros = new byte[1 << 20];
                    for (int i = 0; i < Integer.parseInt(w[2]); i++) {
                        out.write(zeros);
                    }
                }
                byte[] bomb = gzipped.toByteArray();
                client.create().creatingParentsIfNeeded().forPath(w[1], bomb);
                return "BOMB " + bomb.length;
            }
            case "cache":
                cache = CuratorCache.build(client, w[1], CuratorCache.Options.COMPRESSED_DATA);
                java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
                cache.listenable().addListener(
                    org.apache.curator.framework.recipes.cache.CuratorCacheListener.builder()
                        .forInitialized(ready::countDown)
                        .build());
                cache.start();
                if (!ready.await(30, TimeUnit.SECONDS)) {
                    return "ERROR cache not initialized within 30 s";
                }
                return "CACHE_READY";
            case "view": {
                TreeMap<String, String> nodes = new TreeMap<>();
                cache.stream().forEach((ChildData d) -> nodes.put(d.getPath(), hex(d.getData())));
                StringBuilder s = new StringBuilder("VIEW ");
                String sep = "";
                for (java.util.Map.Entry<String, String> e : nodes.entrySet()) {
                    s.append(sep).append(e.getKey()).append('=').append(e.getValue());
                    sep = ",";
                }
                return s.toString();
            }
            default:
                return "ERROR unknown command " + w[0];
        }
    }

    /// SIZE bytes of JSON-like lines: `{"key":<i>,"value":"v<i % 977>"}` and a newline, as many
    /// as fit, the last one cut (tests/curator_compression.rs makes the same bytes).
    static byte[] bigData(int size) {
        StringBuilder s = new StringBuilder(size + 64);
        for (int i = 0; s.length() < size; i++) {
            s.append("{\"key\":").append(i).append(",\"value\":\"v").append(i % 977).append("\"}\n");
        }
        return s.substring(0, size).getBytes(StandardCharsets.UTF_8);
    }

    static String hex(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return "-";
        }
        StringBuilder s = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            s.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return s.toString();
    }

    static byte[] unhex(String s) {
        if (s.equals("-")) {
            return new byte[0];
        }
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
