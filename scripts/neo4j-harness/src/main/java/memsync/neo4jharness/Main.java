package memsync.neo4jharness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

/**
 * Test-only Neo4j 5.x community server for memsync: embedded DBMS with a Bolt
 * connector on 127.0.0.1, authentication DISABLED, no TLS, usage reporting off.
 *
 * Started and stopped by scripts/neo4j; not for production use.
 *
 * Environment:
 *   MEMSYNC_NEO4J_PORT       Bolt port (default 7687)
 *   MEMSYNC_NEO4J_HOST       listen address (default 127.0.0.1)
 *   MEMSYNC_NEO4J_PAGECACHE  page cache size, e.g. 256m (default 256m)
 * Argument: the Neo4j home directory (data/ and logs/ live under it).
 * "--train DIR" instead runs a short workload on a scratch DBMS in DIR and exits
 * (used by scripts/neo4j to record a class-data-sharing archive at build time).
 */
public final class Main {
    public static final String READY_MARKER = "MEMSYNC_NEO4J_READY";

    private Main() {}

    public static void main(String[] args) throws Exception {
        boolean train = args.length == 2 && args[0].equals("--train");
        if (args.length != 1 && !train) {
            System.err.println("usage: Main <neo4j-home-dir> | Main --train <scratch-dir>");
            System.exit(2);
        }
        Path home = Path.of(args[args.length - 1]).toAbsolutePath();
        Files.createDirectories(home);
        String host = env("MEMSYNC_NEO4J_HOST", "127.0.0.1");
        int port = train ? 0 : Integer.parseInt(env("MEMSYNC_NEO4J_PORT", "7687"));
        long pageCache = parseBytes(env("MEMSYNC_NEO4J_PAGECACHE", "256m"));

        long t0 = System.nanoTime();
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                // Bolt on loopback only, plaintext.
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                // Test server: no authentication (clients may send any/no credentials).
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // Modest memory footprint; tests run beside it.
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                // No outbound network calls (dbms.usage_report.enabled).
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseInternalSettings.udc_network_enabled, false)
                // Bolt's netty event loops default to a 5 s "quiet period" on shutdown;
                // tests stop/start the server often, so skip it.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(5))
                // Keep the transaction logs small on disk.
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, 16L * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "64M size")
                .build();

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(Duration.ofMinutes(2).toMillis())) {
            System.err.println("memsync-neo4j: database did not become available");
            dbms.shutdown();
            System.exit(1);
        }

        if (train) {
            // Run by scripts/neo4j once per build under -XX:ArchiveClassesAtExit: a
            // representative workload loads the Cypher/schema/fulltext classes, and
            // the JVM writes them to a CDS archive on exit, which roughly halves the
            // CPU cost of every later start.
            workload(db);
            dbms.shutdown();
            System.out.printf(Locale.ROOT, "memsync-neo4j: training run done in %d ms%n",
                    (System.nanoTime() - t0) / 1_000_000);
            System.out.flush();
            System.exit(0);
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("memsync-neo4j: shutting down");
            try {
                dbms.shutdown();
            } catch (Throwable t) {
                t.printStackTrace();
            } finally {
                System.out.println("memsync-neo4j: stopped");
                System.out.flush();
                stopped.countDown();
            }
        }, "memsync-neo4j-shutdown"));

        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf(Locale.ROOT, "%s bolt://%s:%d (neo4j %s, auth disabled, started in %d ms)%n",
                READY_MARKER, host, port, neo4jVersion(), ms);
        System.out.flush();
        stopped.await();
    }

    private static void workload(GraphDatabaseService db) {
        db.executeTransactionally("CREATE CONSTRAINT train_uuid IF NOT EXISTS FOR (m:Train) REQUIRE m.uuid IS UNIQUE");
        db.executeTransactionally("CREATE FULLTEXT INDEX train_text IF NOT EXISTS FOR (m:Train) ON EACH [m.text]");
        db.executeTransactionally("CREATE INDEX train_ts IF NOT EXISTS FOR (m:Train) ON (m.ts)");
        db.executeTransactionally("CALL db.awaitIndexes(120)");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            rows.add(Map.of("uuid", "u" + i, "text", "memory number " + i + " about foxes", "ts", (long) i));
        }
        for (int round = 0; round < 3; round++) {
            db.executeTransactionally(
                    "UNWIND $rows AS r MERGE (m:Train {uuid: r.uuid}) SET m.text = r.text, m.ts = r.ts "
                            + "WITH m MATCH (o:Train {uuid: 'u0'}) MERGE (m)-[:NEAR]->(o)",
                    Map.of("rows", rows));
            db.executeTransactionally(
                    "CALL db.index.fulltext.queryNodes('train_text', $q) YIELD node, score "
                            + "RETURN node.uuid AS uuid, score ORDER BY score DESC LIMIT 10",
                    Map.of("q", "foxes"), r -> r.stream().count());
            db.executeTransactionally(
                    "MATCH (m:Train)-[r:NEAR]->(o) WHERE m.ts >= $t RETURN count(r) AS n, collect(m.uuid)[..3] AS s",
                    Map.of("t", 10L), r -> r.stream().count());
            db.executeTransactionally("SHOW INDEXES YIELD name, type, state", Map.of(), r -> r.stream().count());
            db.executeTransactionally("SHOW CONSTRAINTS YIELD name, type", Map.of(), r -> r.stream().count());
        }
        db.executeTransactionally("MATCH (m:Train) DETACH DELETE m");
        db.executeTransactionally("DROP INDEX train_text IF EXISTS");
        db.executeTransactionally("DROP INDEX train_ts IF EXISTS");
        db.executeTransactionally("DROP CONSTRAINT train_uuid IF EXISTS");
    }

    private static String neo4jVersion() {
        String v = GraphDatabaseService.class.getPackage().getImplementationVersion();
        return v == null ? "5.x" : v;
    }

    private static String env(String name, String def) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? def : v.trim();
    }

    private static long parseBytes(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long mul = 1;
        if (t.endsWith("b")) t = t.substring(0, t.length() - 1);
        switch (t.isEmpty() ? ' ' : t.charAt(t.length() - 1)) {
            case 'k': mul = 1L << 10; break;
            case 'm': mul = 1L << 20; break;
            case 'g': mul = 1L << 30; break;
            default: mul = 1;
        }
        if (mul != 1) t = t.substring(0, t.length() - 1);
        return Long.parseLong(t.trim()) * mul;
    }
}
