// Curator's side of benches/discovery.rs: Apache Curator's own service discovery
// (curator-x-discovery 5.4) timed inside this JVM with System.nanoTime, after a JIT warm-up,
// against the server the bench measures ours on. Compiled and run by tests/support/mod.rs
// (`Peer`), as the interop peers are.
//
//   java CuratorDiscoveryBench CONNECT
//
// Protocol: as CuratorDiscoveryPeer's: one line per command on stdin, one line per answer on
// stdout; the first line is `CONNECTED`; errors are answered with `ERROR <message>`; `exit` (or
// the end of stdin) closes everything and answers `BYE`.
//
//   register BASE WARMUP ROUNDS
//       -> REGISTER p50_us P p99_us P floor_p50_us P floor_p99_us P rounds TOTAL
//       registerService + unregisterService of a DYNAMIC instance (name `api`, id `me`,
//       10.0.0.1:8080, payload {"zone":"a"}: the bench's own) under BASE, ROUNDS times after
//       WARMUP untimed rounds; each round also times the floor through the same CuratorFramework:
//       create the ephemeral node (the serializer's bytes), delete it. The figures are over the
//       TOTAL timed rounds of every `register` so far: the bench alternates chunks of ours and
//       of Curator's, so that a change in the machine's load falls on both.
//   pick BASE NAME STRATEGY N PICKS BATCHES WARMUP_MS BUDGET_MS
//       -> PICK ns NS instances N batch B
//       a ServiceProvider of NAME under BASE (whose N instances the bench registered) with
//       STRATEGY (`round_robin`: RoundRobinStrategy, Curator's default; `random`:
//       RandomStrategy), started, waited on until it holds N instances; untimed batches of
//       1,000 calls for WARMUP_MS (the JIT), then BATCHES batches of B getInstance() calls: NS
//       is the median of the batches' ns per call. B is PICKS, unless a batch of PICKS would
//       take more than BUDGET_MS at the last warm-up batch's pace: then as many as fit in
//       BUDGET_MS (at least 1,000). Curator's getInstance() copies and filters the instance
//       list on every call, so at 1,000 instances a batch of a million would take over a
//       minute. Every pick must find an instance.
//   exit -> BYE

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.curator.x.discovery.ProviderStrategy;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.strategies.RandomStrategy;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;
import org.apache.zookeeper.CreateMode;

@SuppressWarnings({"rawtypes", "unchecked"})
public final class CuratorDiscoveryBench {
    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    private static void say(String line) {
        OUT.println(line);
        OUT.flush();
    }

    /// Keeps the JIT from dropping the picks.
    private static volatile Object sink;

    private final CuratorFramework client;
    /// Every timed register round so far, and its floor, ns.
    private final List<Long> registerNs = new ArrayList<>();
    private final List<Long> floorNs = new ArrayList<>();

    private CuratorDiscoveryBench(CuratorFramework client) {
        this.client = client;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: CuratorDiscoveryBench CONNECT");
            System.exit(2);
        }
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(args[0])
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        CountDownLatch connected = new CountDownLatch(1);
        client.getConnectionStateListenable().addListener((c, state) -> {
            System.err.println(System.currentTimeMillis() + " connection state " + state);
            if (state == ConnectionState.CONNECTED) {
                connected.countDown();
            }
        });
        client.start();
        if (!connected.await(30, TimeUnit.SECONDS)) {
            say("ERROR not connected within 30 s");
            System.exit(1);
        }
        say("CONNECTED");
        int status = 0;
        try {
            new CuratorDiscoveryBench(client).run();
        } catch (Exception e) {
            say("ERROR " + e.toString().replace('\n', ' '));
            status = 1;
        } finally {
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
                say("BYE");
                break;
            }
            try {
                switch (cmd[0]) {
                    case "register":
                        register(cmd[1], Integer.parseInt(cmd[2]), Integer.parseInt(cmd[3]));
                        break;
                    case "pick":
                        pick(cmd[1], cmd[2], cmd[3], Integer.parseInt(cmd[4]), Integer.parseInt(cmd[5]),
                            Integer.parseInt(cmd[6]), Long.parseLong(cmd[7]), Long.parseLong(cmd[8]));
                        break;
                    default:
                        throw new IllegalArgumentException("unknown command " + cmd[0]);
                }
            } catch (Exception e) {
                String message = e.toString().replace('\n', ' ');
                say("ERROR " + (e.getCause() == null ? message
                    : message + " caused by " + e.getCause().toString().replace('\n', ' ')));
            }
        }
    }

    private ServiceDiscovery<Map> discovery(String base) throws Exception {
        ServiceDiscovery<Map> discovery = ServiceDiscoveryBuilder.builder(Map.class)
            .client(client)
            .basePath(base)
            .serializer(new JsonInstanceSerializer<>(Map.class))
            .build();
        discovery.start();
        return discovery;
    }

    private void register(String base, int warmup, int rounds) throws Exception {
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("zone", "a");
        ServiceInstance<Map> me = new ServiceInstance<Map>(
            "api", "me", "10.0.0.1", 8080, null, payload, System.currentTimeMillis(),
            ServiceType.DYNAMIC, null, true);
        byte[] bytes = new JsonInstanceSerializer<>(Map.class).serialize(me);
        String path = ZKPaths.makePath(ZKPaths.makePath(base, "api"), "me");
        try (ServiceDiscovery<Map> discovery = discovery(base)) {
            for (int i = 0; i < warmup; i++) {
                discovery.registerService(me);
                discovery.unregisterService(me);
                client.create().withMode(CreateMode.EPHEMERAL).forPath(path, bytes);
                client.delete().forPath(path);
            }
            for (int i = 0; i < rounds; i++) {
                long started = System.nanoTime();
                discovery.registerService(me);
                discovery.unregisterService(me);
                registerNs.add(System.nanoTime() - started);
                started = System.nanoTime();
                client.create().withMode(CreateMode.EPHEMERAL).forPath(path, bytes);
                client.delete().forPath(path);
                floorNs.add(System.nanoTime() - started);
            }
        }
        long[] ours = registerNs.stream().mapToLong(Long::longValue).sorted().toArray();
        long[] floor = floorNs.stream().mapToLong(Long::longValue).sorted().toArray();
        say(String.format("REGISTER p50_us %.1f p99_us %.1f floor_p50_us %.1f floor_p99_us %.1f rounds %d",
            percentile(ours, 0.5), percentile(ours, 0.99), percentile(floor, 0.5), percentile(floor, 0.99),
            ours.length));
    }

    /// In µs; the same rank as the bench's own `percentile`.
    private static double percentile(long[] sorted, double p) {
        int i = (int) Math.round((sorted.length - 1) * p);
        return sorted[i] / 1e3;
    }

    private void pick(String base, String name, String strategyName, int n, int picks, int batches,
        long warmupMs, long budgetMs) throws Exception {
        ProviderStrategy<Map> strategy;
        switch (strategyName) {
            case "round_robin":
                strategy = new RoundRobinStrategy<>();
                break;
            case "random":
                strategy = new RandomStrategy<>();
                break;
            default:
                throw new IllegalArgumentException("unknown strategy " + strategyName);
        }
        try (ServiceDiscovery<Map> discovery = discovery(base);
             ServiceProvider<Map> provider = discovery.serviceProviderBuilder()
                 .serviceName(name)
                 .providerStrategy(strategy)
                 .build()) {
            provider.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int held;
            while ((held = provider.getAllInstances().size()) != n) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the provider holds " + held + " instances, not " + n);
                }
                Thread.sleep(10);
            }
            int small = Math.min(picks, 1000);
            double pace = batch(provider, small);
            long warm = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(warmupMs);
            while (System.nanoTime() < warm) {
                pace = batch(provider, small);
            }
            int size = picks;
            double fit = budgetMs * 1e6 / pace;
            if (fit < picks) {
                size = (int) Math.max(small, fit);
            }
            double[] ns = new double[batches];
            for (int b = 0; b < batches; b++) {
                ns[b] = batch(provider, size);
            }
            Arrays.sort(ns);
            say(String.format("PICK ns %.1f instances %d batch %d", ns[batches / 2], held, size));
        }
    }

    /// ns per getInstance() over `picks` calls; every call must find an instance.
    private static double batch(ServiceProvider<Map> provider, int picks) throws Exception {
        int found = 0;
        Object last = null;
        long started = System.nanoTime();
        for (int i = 0; i < picks; i++) {
            ServiceInstance<Map> instance = provider.getInstance();
            if (instance != null) {
                found++;
                last = instance;
            }
        }
        long elapsed = System.nanoTime() - started;
        sink = last;
        if (found != picks) {
            throw new IllegalStateException((picks - found) + " of " + picks + " picks found nothing");
        }
        return (double) elapsed / picks;
    }
}
