// A peer driven over stdin/stdout that runs Apache Curator's own service discovery
// (curator-x-discovery 5.4: ServiceDiscovery, JsonInstanceSerializer, ServiceCache,
// ServiceProvider), so that zkr's discovery can be tested against the real thing
// (tests/curator_discovery.rs compiles and runs it against Debian's jars).
//
//   java CuratorDiscoveryPeer CONNECT BASE KIND MODE
//       a ServiceDiscovery under BASE (started at once) whose payload class is KIND's and whose
//       serializer is `new JsonInstanceSerializer<>(class, MODE == compatible)`
//   java CuratorDiscoveryPeer -
//       no ZooKeeper: only `serialize` works (CONNECTED is printed at once)
//
// KIND (the payload class): `details` (CuratorDiscoveryPeer$Details, a POJO written with its
// `@class`), `string` (String, written bare), `map` (Map, a LinkedHashMap written with its
// `@class`). MODE: `compatible` (no `enabled` key) or `enabled` (`"enabled":...` last).
//
// Protocol: as CuratorPeer's: one line per command on stdin, one line per answer on stdout
// (UTF-8, flushed after each line); the first line is `CONNECTED`; errors are answered with
// `ERROR <message>`; `exit` (or the end of stdin) closes everything and answers `BYE`.
//
// An instance is given as 10 tokens, each text `x<hex of its UTF-8>` (so `x` is the empty
// text) or `-` for null:
//   NAME ID ADDRESS PORT SSLPORT PAYLOAD TIME TYPE URISPEC ENABLED
// PORT and SSLPORT decimal or `-`; PAYLOAD the payload as plain JSON (no `@class`: KIND says
// the class), read with a plain ObjectMapper; TIME decimal (registrationTimeUTC); TYPE a
// ServiceType name; URISPEC a template for `new UriSpec(...)`; ENABLED `true` or `false`.
// The instance is made with ServiceInstance's public constructor (the builder would guess an
// address for a null one).
//
// An instance is printed as one token, its fields joined by `;`:
//   x<name>;x<id>;ADDRESS;PORT;SSLPORT;PAYLOAD;TIME;TYPE;URISPEC;ENABLED;URI
// texts hex as above, `-` for null; PAYLOAD `<the payload's Java class>:x<hex of its plain
// JSON>` (a plain ObjectMapper, no `@class`); URISPEC `spec` then `,v<x hex>` for a variable
// part and `,t<x hex>` for a text part; URI `buildUriSpec()` (`-` without a UriSpec).
// Lists of instances are these tokens separated by spaces, sorted by id. In the commands,
// NAME is a service name as is, ID an instance id as a text token (`x<hex>`).
//
//   serialize KIND MODE INSTANCE -> BYTES <hex>       Curator's serializer's bytes
//   register INSTANCE            -> REGISTERED        registerService
//   update INSTANCE              -> UPDATED           updateService
//   unregister ID                -> UNREGISTERED      unregisterService (of the one registered
//                                                     or updated last with that id)
//   names                        -> NAMES <name>,...  queryForNames, sorted
//   query NAME                   -> INSTANCES <instance> ...      queryForInstances
//   queryone NAME ID             -> INSTANCE <instance>|-         queryForInstance
//   cache NAME                   -> CACHE_STARTED     a ServiceCache of NAME, started; from then
//                                                     on every cacheChanged() prints
//                                                     CACHE_CHANGED <instance> ... (getInstances)
//                                                     and every stateChanged CACHE_STATE <state>
//   cached                       -> CACHED <instance> ...         the cache's getInstances
//   provider NAME                -> PROVIDER_STARTED  a ServiceProvider of NAME (round robin,
//                                                     Curator's default), started
//   pick                         -> PICKED <instance>|-           getInstance
//   pickall                      -> ALL <instance> ...            getAllInstances
//   exit                         -> BYE

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

@SuppressWarnings({"rawtypes", "unchecked"})
public final class CuratorDiscoveryPeer {
    /// The test's own payload class: Jackson writes it with `"@class":"CuratorDiscoveryPeer$Details"`.
    public static final class Details {
        public String zone;
        public int weight;
        public List<String> tags;

        public Details() {
        }
    }

    private static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    /// For payloads in and out as plain JSON (no type information).
    private static final ObjectMapper PLAIN = new ObjectMapper();

    private static synchronized void say(String line) {
        OUT.println(line);
        OUT.flush();
    }

    private final CuratorFramework client;
    private final String kind;
    private final ServiceDiscovery discovery;
    private final Map<String, ServiceInstance> registered = new HashMap<>();
    private ServiceCache cache;
    private ServiceProvider provider;

    private CuratorDiscoveryPeer(CuratorFramework client, String kind, ServiceDiscovery discovery) {
        this.client = client;
        this.kind = kind;
        this.discovery = discovery;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("-")) {
            say("CONNECTED");
            new CuratorDiscoveryPeer(null, null, null).run();
            System.exit(0);
        }
        if (args.length != 4) {
            System.err.println("usage: CuratorDiscoveryPeer CONNECT BASE details|string|map compatible|enabled, or CuratorDiscoveryPeer -");
            System.exit(2);
        }
        CuratorFramework client = newClient(args[0]);
        Class cls = payloadClass(args[2]);
        ServiceDiscovery discovery = ServiceDiscoveryBuilder.builder(cls)
            .client(client)
            .basePath(args[1])
            .serializer(serializer(args[2], args[3]))
            .build();
        // Started before the client, so that its connection state listener is there when
        // CONNECTED is told: Curator re-registers every instance (delete, create) on CONNECTED
        // and RECONNECTED, and a CONNECTED told late would re-register, racing the test, an
        // instance registered just after we print CONNECTED. With nothing registered yet,
        // start() touches no node.
        discovery.start();
        CountDownLatch connected = new CountDownLatch(1);
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.CONNECTED) {
                connected.countDown();
            }
        });
        client.start();
        // Told to the listeners (the discovery's too, on the same thread), not only connected.
        if (!connected.await(30, TimeUnit.SECONDS)) {
            say("ERROR not connected within 30 s");
            System.exit(1);
        }
        say("CONNECTED");
        CuratorDiscoveryPeer peer = new CuratorDiscoveryPeer(client, args[2], discovery);
        int status = 0;
        try {
            peer.run();
        } catch (Exception e) {
            say("ERROR " + describe(e));
            status = 1;
        } finally {
            if (peer.provider != null) {
                peer.provider.close();
            }
            if (peer.cache != null) {
                peer.cache.close();
            }
            discovery.close();
            client.close();
        }
        System.exit(status);
    }

    /// A client (not started), with CuratorPeer's settings.
    private static CuratorFramework newClient(String connectString) {
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 5))
            .build();
        client.getConnectionStateListenable().addListener(
            (c, state) -> System.err.println(System.currentTimeMillis() + " connection state " + state));
        return client;
    }

    private static Class payloadClass(String kind) {
        switch (kind) {
            case "details":
                return Details.class;
            case "string":
                return String.class;
            case "map":
                return Map.class;
            default:
                throw new IllegalArgumentException("unknown payload kind " + kind);
        }
    }

    private static JsonInstanceSerializer serializer(String kind, String mode) {
        switch (mode) {
            case "compatible":
                return new JsonInstanceSerializer(payloadClass(kind));
            case "enabled":
                return new JsonInstanceSerializer(payloadClass(kind), false);
            default:
                throw new IllegalArgumentException("unknown serializer mode " + mode);
        }
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
                command(cmd);
            } catch (Exception e) {
                say("ERROR " + describe(e));
            }
        }
    }

    private void command(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "serialize": {
                ServiceInstance instance = instance(cmd[1], cmd, 3);
                say("BYTES " + hex(serializer(cmd[1], cmd[2]).serialize(instance)));
                return;
            }
            case "register": {
                ServiceInstance instance = instance(kind, cmd, 1);
                discovery.registerService(instance);
                registered.put(instance.getId(), instance);
                say("REGISTERED");
                return;
            }
            case "update": {
                ServiceInstance instance = instance(kind, cmd, 1);
                discovery.updateService(instance);
                registered.put(instance.getId(), instance);
                say("UPDATED");
                return;
            }
            case "unregister": {
                ServiceInstance instance = registered.remove(text(cmd[1]));
                if (instance == null) {
                    throw new IllegalArgumentException("not registered here: " + cmd[1]);
                }
                discovery.unregisterService(instance);
                say("UNREGISTERED");
                return;
            }
            case "names":
                say("NAMES " + String.join(",", new TreeSet<String>(discovery.queryForNames())));
                return;
            case "query":
                say("INSTANCES " + list(discovery.queryForInstances(cmd[1])));
                return;
            case "queryone": {
                ServiceInstance instance = discovery.queryForInstance(cmd[1], text(cmd[2]));
                say("INSTANCE " + (instance == null ? "-" : show(instance)));
                return;
            }
            case "cache": {
                ServiceCache started = discovery.serviceCacheBuilder().name(cmd[1]).build();
                started.addListener(new ServiceCacheListener() {
                    @Override
                    public void cacheChanged() {
                        say("CACHE_CHANGED " + list(started.getInstances()));
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState state) {
                        say("CACHE_STATE " + state);
                    }
                });
                started.start();
                cache = started;
                say("CACHE_STARTED");
                return;
            }
            case "cached":
                say("CACHED " + list(cache.getInstances()));
                return;
            case "provider": {
                ServiceProvider started = discovery.serviceProviderBuilder().serviceName(cmd[1]).build();
                started.start();
                provider = started;
                say("PROVIDER_STARTED");
                return;
            }
            case "pick": {
                ServiceInstance instance = provider.getInstance();
                say("PICKED " + (instance == null ? "-" : show(instance)));
                return;
            }
            case "pickall":
                say("ALL " + list(provider.getAllInstances()));
                return;
            default:
                throw new IllegalArgumentException("unknown command " + cmd[0]);
        }
    }

    /// The instance given as the 10 tokens from `cmd[at]` (see the header).
    private static ServiceInstance instance(String kind, String[] cmd, int at) throws Exception {
        if (cmd.length != at + 10) {
            throw new IllegalArgumentException("an instance is 10 tokens, got " + (cmd.length - at));
        }
        String payloadJson = text(cmd[at + 5]);
        Object payload = null;
        if (payloadJson != null) {
            Class cls = kind.equals("map") ? LinkedHashMap.class : payloadClass(kind);
            payload = PLAIN.readValue(payloadJson, cls);
        }
        String spec = text(cmd[at + 8]);
        return new ServiceInstance(
            text(cmd[at]),
            text(cmd[at + 1]),
            text(cmd[at + 2]),
            integer(cmd[at + 3]),
            integer(cmd[at + 4]),
            payload,
            Long.parseLong(cmd[at + 6]),
            ServiceType.valueOf(cmd[at + 7]),
            spec == null ? null : new UriSpec(spec),
            Boolean.parseBoolean(cmd[at + 9]));
    }

    private static String list(Collection<ServiceInstance> instances) {
        List<ServiceInstance> sorted = new ArrayList<>(instances);
        sorted.sort(Comparator.comparing(ServiceInstance::getId));
        List<String> shown = new ArrayList<>();
        for (ServiceInstance instance : sorted) {
            shown.add(show(instance));
        }
        return String.join(" ", shown);
    }

    /// One instance as one token (see the header).
    private static String show(ServiceInstance instance) {
        List<String> fields = new ArrayList<>();
        fields.add(token(instance.getName()));
        fields.add(token(instance.getId()));
        fields.add(token(instance.getAddress()));
        fields.add(instance.getPort() == null ? "-" : instance.getPort().toString());
        fields.add(instance.getSslPort() == null ? "-" : instance.getSslPort().toString());
        Object payload = instance.getPayload();
        if (payload == null) {
            fields.add("-");
        } else {
            try {
                fields.add(payload.getClass().getName() + ":" + token(PLAIN.writeValueAsString(payload)));
            } catch (Exception e) {
                throw new IllegalStateException("payload " + payload + ": " + e, e);
            }
        }
        fields.add(Long.toString(instance.getRegistrationTimeUTC()));
        fields.add(instance.getServiceType() == null ? "-" : instance.getServiceType().name());
        UriSpec spec = instance.getUriSpec();
        if (spec == null) {
            fields.add("-");
        } else {
            StringBuilder parts = new StringBuilder("spec");
            for (UriSpec.Part part : spec.getParts()) {
                parts.append(part.isVariable() ? ",v" : ",t").append(token(part.getValue()));
            }
            fields.add(parts.toString());
        }
        fields.add(Boolean.toString(instance.isEnabled()));
        fields.add(spec == null ? "-" : token(instance.buildUriSpec()));
        return String.join(";", fields);
    }

    private static String token(String text) {
        return text == null ? "-" : "x" + hex(text.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(String token) {
        if (token.equals("-")) {
            return null;
        }
        if (!token.startsWith("x")) {
            throw new IllegalArgumentException("a text token is x<hex> or -: " + token);
        }
        return new String(unhex(token.substring(1)), StandardCharsets.UTF_8);
    }

    private static Integer integer(String token) {
        return token.equals("-") ? null : Integer.valueOf(token);
    }

    private static String hex(byte[] data) {
        StringBuilder s = new StringBuilder();
        for (byte b : data) {
            s.append(String.format("%02x", b & 0xff));
        }
        return s.toString();
    }

    private static byte[] unhex(String hex) {
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
