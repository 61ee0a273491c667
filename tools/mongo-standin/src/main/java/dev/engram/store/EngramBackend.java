package dev.engram.store;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractMongoBackend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.NoopOplog;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The embedded store behind `npm run dev`, the tests and the bench: mongo-java-server's wire
 * protocol and query engine over in-heap collections with real secondary indexes, made durable by
 * a journal and snapshots ({@link EngramStore}). Data lives in the JVM heap; the files hold it
 * across restarts and crashes.
 *
 * <p>Admin commands: {@code {engramStats: 1, reset: false}} (the store's files and, per collection,
 * documents examined and returned per query shape and plan) and {@code {engramCompact: 1}}.
 */
public final class EngramBackend extends AbstractMongoBackend {

    private final EngramStore store;
    private final Set<EngramCollection> journaled = ConcurrentHashMap.newKeySet();
    private final Set<EngramCollection> all = ConcurrentHashMap.newKeySet();
    private final EmbeddedChannel replayChannel = new EmbeddedChannel();

    /**
     * @param dir where the snapshot and journals live; null keeps everything in memory only
     * @param fsyncIntervalMillis how often the journal is fsynced (an OS crash can lose this much)
     */
    public EngramBackend(Path dir, long fsyncIntervalMillis) {
        this.store = new EngramStore(dir, fsyncIntervalMillis);
    }

    /** Loads what the files hold. Call once, before the server accepts connections. */
    public void open() throws IOException {
        store.open(this);
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        return new EngramDatabase(databaseName, getCursorRegistry(), store, this);
    }

    void register(EngramCollection collection, boolean isJournaled) {
        all.add(collection);
        if (isJournaled) {
            journaled.add(collection);
        }
    }

    Channel replayChannel() {
        return replayChannel;
    }

    private boolean live(EngramCollection collection) {
        String db = collection.getDatabaseName();
        if (!listDatabaseNames().contains(db)) {
            return false;
        }
        return resolveDatabase(db).resolveCollection(collection.getCollectionName(), false) == collection;
    }

    /** The journaled collections that currently exist (dropped and renamed-away ones are forgotten). */
    List<EngramCollection> journaledCollections() {
        List<EngramCollection> result = new ArrayList<>();
        for (EngramCollection collection : journaled) {
            if (live(collection)) {
                result.add(collection);
            } else {
                journaled.remove(collection);
            }
        }
        result.sort(Comparator.comparing(MongoCollection::getFullName));
        return result;
    }

    List<Document> indexDescriptions(EngramCollection collection) {
        return ((EngramDatabase) resolveDatabase(collection.getDatabaseName())).indexDescriptions(collection.getCollectionName());
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        if (command.equalsIgnoreCase("engramStats")) {
            return stats(query);
        }
        if (command.equalsIgnoreCase("engramCompact")) {
            store.compactNow();
            return stats(new Document());
        }
        try {
            return super.handleCommand(channel, databaseName, command, query);
        } finally {
            // Whatever this command changed reaches the journal file before its reply is sent.
            store.commit();
        }
    }

    @Override
    public void dropDatabase(String databaseName) {
        super.dropDatabase(databaseName);
        if (!databaseName.equals("local")) {
            store.recordMeta(RecordFile.DROP_DATABASE, databaseName, "", new Document());
        }
    }

    @Override
    public void close() {
        super.close();
        store.close();
    }

    private Document stats(Document query) {
        boolean reset = Boolean.TRUE.equals(query.get("reset"));
        Object onlyDb = query.get("db");
        Document response = new Document("store", store.stats());
        List<Document> collections = new ArrayList<>();
        List<EngramCollection> sorted = new ArrayList<>(all);
        sorted.sort(Comparator.comparing(MongoCollection::getFullName));
        for (EngramCollection collection : sorted) {
            if (!live(collection)) {
                all.remove(collection);
                continue;
            }
            if (onlyDb != null && !onlyDb.equals(collection.getDatabaseName())) {
                continue;
            }
            collections.add(collection.stats(reset));
        }
        response.append("collections", collections);
        response.put("ok", 1.0);
        return response;
    }

    // ------------------------------------------------------------------------------------------
    // Replay

    /** Applies one record of the snapshot or the journal (uniqueness is not enforced while loading). */
    void apply(RecordFile.Entry entry) {
        switch (entry.type()) {
            case RecordFile.PUT -> {
                EngramCollection collection = database(entry).replayCollection(entry.collection());
                Document document = entry.body();
                Document existing = collection.findById(document.get("_id"));
                if (existing != null) {
                    collection.removeDocument(existing);
                }
                collection.addDocument(document);
            }
            case RecordFile.DELETE -> {
                MongoCollection<?> found = existingCollection(entry);
                if (found instanceof EngramCollection collection) {
                    Document existing = collection.findById(entry.body().get("_id"));
                    if (existing != null) {
                        collection.removeDocument(existing);
                    }
                }
            }
            case RecordFile.CREATE_COLLECTION -> database(entry).replayCollection(entry.collection());
            case RecordFile.DROP_COLLECTION -> {
                if (existingCollection(entry) != null) {
                    database(entry).dropCollection(entry.collection(), NoopOplog.get());
                }
            }
            case RecordFile.CREATE_INDEX -> database(entry).replayAddIndex(entry.body());
            case RecordFile.DROP_INDEX -> database(entry).replayDropIndex(entry.collection(), String.valueOf(entry.body().get("name")));
            case RecordFile.DROP_DATABASE -> dropDatabase(entry.database());
            default -> throw new IllegalStateException("unknown record type " + entry.type());
        }
    }

    private EngramDatabase database(RecordFile.Entry entry) {
        return (EngramDatabase) resolveDatabase(entry.database());
    }

    private MongoCollection<?> existingCollection(RecordFile.Entry entry) {
        if (!listDatabaseNames().contains(entry.database())) {
            return null;
        }
        return resolveDatabase(entry.database()).resolveCollection(entry.collection(), false);
    }
}
