package dev.engram;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import dev.engram.store.EngramBackend;
import io.netty.channel.Channel;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * Launches mongo-java-server as a stand-in for MongoDB in development, tests and the bench.
 *
 * <pre>
 *   java -Xmx4g -cp 'target/classes:target/lib/*' dev.engram.MongoStandin \
 *       [--host 127.0.0.1] [--port 27017] [--backend journal|memory|h2]
 *       [--data-dir DIR] [--fsync-ms 100] [--h2-file PATH]
 * </pre>
 *
 * Backends: {@code journal} (the default: in-heap collections with secondary indexes, made durable
 * by a journal and snapshots in DIR; see dev.engram.store.EngramBackend), {@code memory}
 * (mongo-java-server's own, nothing on disk, unique indexes only) and {@code h2} (its H2 MVStore
 * backend, kept for comparison). Prints exactly one line "READY &lt;port&gt;" to stdout once the
 * store is loaded and the socket is bound, and shuts the server down (which writes and fsyncs
 * the journal, or closes the H2 file) on SIGTERM / SIGINT. The oplog is enabled because change
 * streams need it. Production uses a real MongoDB replica set instead.
 */
public final class MongoStandin {

    private MongoStandin() {
    }

    private static final String USAGE =
            "usage: MongoStandin [--host 127.0.0.1] [--port 27017] [--backend journal|memory|h2] [--data-dir DIR]"
                + " [--fsync-ms 100] [--h2-file PATH]";

    public static void main(String[] args) throws Exception {
        // slf4j-simple reads these on first use, so set them before any server class loads.
        setDefault("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setDefault("org.slf4j.simpleLogger.showDateTime", "true");
        setDefault("org.slf4j.simpleLogger.logFile", "System.err");

        String host = "127.0.0.1";
        int port = 27017;
        String backendName = "journal";
        String h2File = null;
        String dataDir = null;
        long fsyncMillis = 100;

        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--host" -> host = value(args, ++i, arg);
                case "--port" -> port = parsePort(value(args, ++i, arg));
                case "--backend" -> backendName = value(args, ++i, arg);
                case "--h2-file" -> h2File = value(args, ++i, arg);
                case "--data-dir" -> dataDir = value(args, ++i, arg);
                case "--fsync-ms" -> fsyncMillis = parsePositive(value(args, ++i, arg), arg);
                case "-h", "--help" -> {
                    System.out.println(USAGE);
                    return;
                }
                default -> fail("unknown argument: " + arg);
            }
        }

        MongoBackend backend;
        switch (backendName) {
            case "journal" -> {
                // Without --data-dir: the same engine (indexes, statistics) with nothing on disk.
                EngramBackend engram = new EngramBackend(dataDir == null ? null : Path.of(dataDir).toAbsolutePath(), fsyncMillis);
                engram.open();
                backend = engram;
            }
            case "memory" -> backend = new MemoryBackend();
            case "h2" -> {
                if (h2File == null) {
                    fail("--backend h2 needs --h2-file PATH");
                }
                Path parent = Path.of(h2File).toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                backend = new DurableH2Backend(h2File);
            }
            default -> {
                fail("--backend must be journal, memory or h2, got: " + backendName);
                return;
            }
        }

        MongoServer server = new MongoServer(backend);
        // Change streams (collection.watch()) only work when the oplog is on.
        server.enableOplog();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                // Stops listening, closes client channels, then closes the backend (H2 commits and closes its file).
                server.shutdown();
            } catch (RuntimeException e) {
                System.err.println("mongo-standin: error during shutdown: " + e);
            } finally {
                stopped.countDown();
            }
        }, "mongo-standin-shutdown"));

        try {
            server.bind(host, port);
        } catch (Exception e) {
            // Netty rethrows the checked java.net.BindException undeclared, hence Exception here.
            System.err.println("mongo-standin: cannot listen on " + host + ":" + port + ": " + e);
            System.exit(1);
        }

        int boundPort = server.getLocalAddress().getPort();
        System.err.println("mongo-standin: backend=" + backendName
                + (h2File != null && backendName.equals("h2") ? " file=" + h2File : "")
                + (dataDir != null && backendName.equals("journal") ? " dir=" + dataDir : "")
                + " listening on " + host + ":" + boundPort);
        System.out.println("READY " + boundPort);
        System.out.flush();

        // Netty's event loop threads keep the JVM alive; wait here until the shutdown hook has run.
        stopped.await();
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            fail(flag + " needs a value");
        }
        return args[i];
    }

    private static int parsePort(String s) {
        try {
            int p = Integer.parseInt(s);
            if (p < 0 || p > 65535) {
                fail("--port out of range: " + s);
            }
            return p;
        } catch (NumberFormatException e) {
            fail("--port must be a number: " + s);
            return -1;
        }
    }

    private static long parsePositive(String s, String flag) {
        try {
            long v = Long.parseLong(s);
            if (v <= 0) {
                fail(flag + " must be positive: " + s);
            }
            return v;
        } catch (NumberFormatException e) {
            fail(flag + " must be a number: " + s);
            return -1;
        }
    }

    private static void fail(String message) {
        System.err.println("mongo-standin: " + message);
        System.err.println(USAGE);
        System.exit(2);
    }

    /**
     * The H2 backend commits its MVStore from a background thread about once a second, so a write
     * was acknowledged before it reached the file, and a killed server lost the last second of
     * acknowledged writes (bench/soak.ts measured 250 of 20,000). This one commits a write command
     * before its reply is sent: what a client was told is stored is in the file (the OS's page
     * cache) when the process dies.
     */
    static final class DurableH2Backend extends H2Backend {
        private static final Set<String> WRITES = Set.of(
                "insert", "update", "delete", "findandmodify", "create", "createindexes",
                "drop", "dropdatabase", "dropindexes", "renamecollection");

        DurableH2Backend(String fileName) {
            super(fileName);
        }

        @Override
        public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
            Document reply = super.handleCommand(channel, databaseName, command, query);
            if (WRITES.contains(command.toLowerCase(Locale.ROOT))) {
                commit();
            }
            return reply;
        }
    }
}
