package dev.engram.store;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;

import java.util.ArrayList;
import java.util.List;

/**
 * A database of {@link EngramCollection}s: every index is an {@link OrderedIndex} (mongo-java-server
 * ignores non-unique ones), every structural change (collection and index creation and removal)
 * is journaled, and an aggregation that starts with {@code $match} reads through the indexes
 * (countDocuments is one) instead of scanning the whole collection.
 */
final class EngramDatabase extends AbstractSynchronizedMongoDatabase<Integer> {

    /** mongo-java-server keeps the oplog in a collection that grows forever; change streams only need the recent end. */
    private static final int OPLOG_CAP = 10_000;

    private final EngramStore store;
    private final EngramBackend backend;

    EngramDatabase(String databaseName, CursorRegistry cursorRegistry, EngramStore store, EngramBackend backend) {
        super(databaseName, cursorRegistry);
        this.store = store;
        this.backend = backend;
        initializeNamespacesAndIndexes();
    }

    static boolean isSystem(String collectionName) {
        return collectionName.startsWith("system.");
    }

    private boolean journaled(String collectionName) {
        return store.persistent() && !getDatabaseName().equals("local") && !isSystem(collectionName);
    }

    @Override
    protected EngramCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        int cap = getDatabaseName().equals("local") && collectionName.equals("oplog.rs") ? OPLOG_CAP : 0;
        boolean journaled = journaled(collectionName);
        EngramCollection collection = new EngramCollection(this, collectionName, options, cursorRegistry, store, journaled, cap);
        backend.register(collection, journaled);
        if (journaled) {
            store.recordMeta(RecordFile.CREATE_COLLECTION, getDatabaseName(), collectionName, new Document());
        }
        return collection;
    }

    @Override
    protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        return new OrderedIndex(indexName, keys, sparse, true, store);
    }

    @Override
    protected Index<Integer> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        return new OrderedIndex(indexName, keys, sparse, false, store);
    }

    @Override
    protected synchronized void addIndex(Document indexDescription) {
        String ns = String.valueOf(indexDescription.get("ns"));
        String collectionName = ns.substring(getDatabaseName().length() + 1);
        String name = String.valueOf(indexDescription.get("name"));
        MongoCollection<Integer> existing = resolveCollection(collectionName, false);
        boolean existed = existing != null && existing.getIndexes().stream().anyMatch(i -> i.getName().equals(name));
        super.addIndex(indexDescription);
        if (!existed && journaled(collectionName)) {
            store.recordMeta(RecordFile.CREATE_INDEX, getDatabaseName(), collectionName, indexDescription);
        }
    }

    /** Replays an index definition from the snapshot or the journal. */
    void replayAddIndex(Document indexDescription) {
        addIndex(indexDescription);
    }

    /** Replays a collection's creation. */
    EngramCollection replayCollection(String collectionName) {
        return (EngramCollection) resolveOrCreateCollection(collectionName);
    }

    @Override
    public void dropCollection(String collectionName, Oplog oplog) {
        super.dropCollection(collectionName, oplog);
        if (journaled(collectionName)) {
            store.recordMeta(RecordFile.DROP_COLLECTION, getDatabaseName(), collectionName, new Document());
        }
    }

    @Override
    protected void dropIndex(MongoCollection<Integer> collection, String indexName) {
        super.dropIndex(collection, indexName);
        if (journaled(collection.getCollectionName())) {
            store.recordMeta(RecordFile.DROP_INDEX, getDatabaseName(), collection.getCollectionName(), new Document("name", indexName));
        }
    }

    /** Replays an index's removal: the collection's index and its system.indexes entry. */
    void replayDropIndex(String collectionName, String indexName) {
        MongoCollection<Integer> collection = resolveCollection(collectionName, false);
        if (collection == null || collection.getIndexes().stream().noneMatch(i -> i.getName().equals(indexName))) {
            return;
        }
        handleCommand(backend.replayChannel(), "dropIndexes", new Document("dropIndexes", collectionName).append("index", indexName),
            null, de.bwaldvogel.mongo.oplog.NoopOplog.get());
    }

    @Override
    public void moveCollection(MongoDatabase oldDatabase, MongoCollection<?> collection, String newCollectionName) {
        String oldDb = collection.getDatabaseName();
        String oldName = collection.getCollectionName();
        super.moveCollection(oldDatabase, collection, newCollectionName);
        // A rename is journaled as what it results in: the old name gone, the new one whole.
        store.recordMeta(RecordFile.DROP_COLLECTION, oldDb, oldName, new Document());
        if (collection instanceof EngramCollection moved && journaled(newCollectionName)) {
            store.recordMeta(RecordFile.CREATE_COLLECTION, getDatabaseName(), newCollectionName, new Document());
            for (Document index : indexDescriptions(newCollectionName)) {
                store.recordMeta(RecordFile.CREATE_INDEX, getDatabaseName(), newCollectionName, index);
            }
            for (Document document : moved.liveDocuments()) {
                store.recordMeta(RecordFile.PUT, getDatabaseName(), newCollectionName, document);
            }
        }
    }

    /** The index definitions of a collection, as createIndexes gave them (with their ns). */
    List<Document> indexDescriptions(String collectionName) {
        List<Document> result = new ArrayList<>();
        MongoCollection<Integer> indexes = resolveCollection("system.indexes", false);
        if (indexes != null) {
            for (Document description : indexes.handleQuery(new Document("ns", getDatabaseName() + "." + collectionName))) {
                result.add(description);
            }
        }
        return result;
    }

    @Override
    protected long getStorageSize() {
        return store.diskBytes();
    }

    @Override
    protected long getFileSize() {
        return store.diskBytes();
    }

    @Override
    public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver databaseResolver, Oplog oplog) {
        if (command.equalsIgnoreCase("aggregate")) {
            Document pushedDown = aggregateThroughIndexes(command, query, databaseResolver, oplog);
            if (pushedDown != null) {
                return pushedDown;
            }
        }
        return super.handleCommand(channel, command, query, databaseResolver, oplog);
    }

    /**
     * The reply to a count (what the driver's countDocuments sends: a $match, then
     * {@code {$group: {_id: 1, n: {$sum: 1}}}}) when the collection's index can say it alone
     * ({@link EngramCollection#countThroughIndex}); null otherwise. Like the $group it stands for,
     * it answers no document for a count of 0.
     */
    private Document countThroughIndex(EngramCollection collection, Document match, List<Document> rest) {
        if (rest.size() != 1 || !(rest.get(0).get("$group") instanceof Document group) || rest.get(0).size() != 1 || group.size() != 2
            || !(group.get("n") instanceof Document sum) || sum.size() != 1 || !(sum.get("$sum") instanceof Number one)
            || one.doubleValue() != 1 || !group.containsKey("_id") || group.get("_id") instanceof Document
            || group.get("_id") instanceof String) {
            return null;
        }
        Long count = collection.countThroughIndex(match);
        if (count == null) {
            return null;
        }
        List<Document> batch = new ArrayList<>();
        if (count > 0) {
            Document row = new Document("_id", group.get("_id"));
            row.put("n", count <= Integer.MAX_VALUE ? (Object) count.intValue() : (Object) count);
            batch.add(row);
        }
        Document cursor = new Document("id", 0L)
            .append("ns", getDatabaseName() + "." + collection.getCollectionName())
            .append("firstBatch", batch);
        Document response = new Document("cursor", cursor);
        response.put("ok", 1.0);
        return response;
    }

    /**
     * mongo-java-server runs every pipeline over the whole collection; when the first stage is a
     * $match, read its documents through the collection's planner instead, then run the rest.
     */
    @SuppressWarnings("unchecked")
    private Document aggregateThroughIndexes(String command, Document query, DatabaseResolver databaseResolver, Oplog oplog) {
        if (!(query.get(command) instanceof String collectionName) || !(query.get("pipeline") instanceof List<?> stages)
            || stages.isEmpty() || !(stages.get(0) instanceof Document first) || first.size() != 1
            || !(first.get("$match") instanceof Document match)) {
            return null;
        }
        for (Object stage : stages) {
            if (stage instanceof Document d && d.containsKey("$changeStream")) {
                return null;
            }
        }
        MongoCollection<Integer> collection = resolveCollection(collectionName, false);
        if (!(collection instanceof EngramCollection)) {
            return null;
        }
        List<Document> rest = new ArrayList<>((List<Document>) stages).subList(1, stages.size());
        Document counted = countThroughIndex((EngramCollection) collection, match, rest);
        if (counted != null) {
            return counted;
        }
        Aggregation aggregation = Aggregation.fromPipeline(rest, databaseResolver, this, collection, oplog);
        aggregation.validate(query);
        List<Document> matched = new ArrayList<>();
        for (Document document : collection.handleQuery(match, 0, 0)) {
            matched.add(document);
        }
        List<Document> result = aggregation.runStages(matched.stream());
        Document cursor = new Document("id", 0L)
            .append("ns", getDatabaseName() + "." + collectionName)
            .append("firstBatch", result);
        Document response = new Document("cursor", cursor);
        response.put("ok", 1.0);
        return response;
    }
}
