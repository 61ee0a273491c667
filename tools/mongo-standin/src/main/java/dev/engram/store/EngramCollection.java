package dev.engram.store;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoCollection;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * An in-heap collection (like mongo-java-server's MemoryCollection) whose queries use real
 * secondary indexes ({@link OrderedIndex}), whose every change is handed to the store's journal,
 * and which counts what each query shape examined ({@code engramStats}).
 *
 * <p>Stored documents are never changed in place: an update stores a new Document. So a document
 * handed out by a query (encoded into a reply after the collection's lock is released) or read by
 * the snapshot writer is a stable value. mongo-java-server's own collections mutate the stored
 * instance, which is why concurrent {@code findOneAndUpdate({$inc})} replies could show another
 * request's value.
 */
final class EngramCollection extends AbstractSynchronizedMongoCollection<Integer> {

    private final List<Document> documents = new ArrayList<>();
    /** Stored documents share their field names, and repeated values (FieldNames says why). */
    private final FieldNames fieldNames = new FieldNames();
    private int[] sizes = new int[16];
    private final ArrayDeque<Integer> freePositions = new ArrayDeque<>();
    private long dataSize;
    private final EngramStore store;
    private final boolean journaled;
    /** Keep at most this many documents, dropping the oldest (the oplog); 0: no cap. */
    private final int cap;
    private final ArrayDeque<Document> insertionOrder;
    /** Set while an update runs, so its query hands out copies for the superclass to modify. */
    private boolean copyResults;

    private final Map<String, ShapeStats> shapes = new LinkedHashMap<>(16, 0.75f, false);
    private long queries;
    private long examined;
    private long returned;
    private long collectionScans;
    private long collectionScanExamined;

    EngramCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                     CursorRegistry cursorRegistry, EngramStore store, boolean journaled, int cap) {
        super(database, collectionName, options, cursorRegistry);
        this.store = store;
        this.journaled = journaled;
        this.cap = cap;
        this.insertionOrder = cap > 0 ? new ArrayDeque<>() : null;
    }

    // ------------------------------------------------------------------------------------------
    // Storage

    @Override
    protected boolean tracksDataSize() {
        // Sizes are taken from the journal encoding instead of a second BSON encoding per write.
        return false;
    }

    @Override
    protected void updateDataSize(int sizeDelta) {
        // not used (tracksDataSize is false)
    }

    @Override
    protected int getDataSize() {
        return (int) Math.min(Integer.MAX_VALUE, dataSize);
    }

    synchronized long dataBytes() {
        return dataSize;
    }

    @Override
    protected Integer addDocumentInternal(Document given) {
        Document document = fieldNames.share(given);
        Integer position = freePositions.poll();
        if (position == null) {
            position = documents.size();
            documents.add(document);
        } else {
            documents.set(position, document);
        }
        int size = store.recordPut(this, document, journaled);
        setSize(position, size);
        if (insertionOrder != null) {
            insertionOrder.add(document);
        }
        return position;
    }

    private void setSize(int position, int size) {
        if (position >= sizes.length) {
            sizes = Arrays.copyOf(sizes, Math.max(position + 1, sizes.length * 2));
        }
        int delta = size - sizes[position];
        dataSize += delta;
        sizes[position] = size;
        if (journaled) {
            store.adjustLiveBytes(delta);
        }
    }

    @Override
    public synchronized void addDocument(Document document) {
        super.addDocument(document);
        if (insertionOrder != null) {
            while (insertionOrder.size() > cap) {
                removeDocument(insertionOrder.poll());
            }
        }
    }

    @Override
    protected void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
        // newDocument is the copy the update was applied to (see copyResults): it replaces the stored one.
        Document stored = fieldNames.share(newDocument);
        documents.set(position, stored);
        setSize(position, store.recordPut(this, stored, journaled));
    }

    @Override
    protected void removeDocument(Integer position) {
        Document document = documents.get(position);
        documents.set(position, null);
        freePositions.add(position);
        setSize(position, 0);
        if (document != null) {
            store.recordDelete(this, document.get(getIdField()), journaled);
        }
    }

    @Override
    public synchronized void removeDocument(Document document) {
        Integer position = locate(document);
        if (position == null) {
            return;
        }
        Document stored = documents.get(position);
        for (Index<Integer> index : getIndexes()) {
            ((OrderedIndex) index).removeAt(stored, position);
        }
        removeDocument(position);
    }

    /** The position of the stored document with this document's _id (or, without an _id index, an equal one). */
    private Integer locate(Document document) {
        OrderedIndex idIndex = idIndex();
        String idField = getIdField();
        if (idIndex != null && idField != null && document.containsKey(idField)) {
            return idIndex.positionOf(document.get(idField));
        }
        return findDocumentPosition(document);
    }

    private OrderedIndex idIndex() {
        String idField = getIdField();
        for (Index<Integer> index : getIndexes()) {
            OrderedIndex ordered = (OrderedIndex) index;
            if (ordered.isUnique() && ordered.keyCount() == 1 && ordered.path(0).equals(idField)) {
                return ordered;
            }
        }
        return null;
    }

    /** The stored document with this _id, or null (used when loading the store). */
    synchronized Document findById(Object id) {
        OrderedIndex idIndex = idIndex();
        if (idIndex == null) {
            return null;
        }
        Integer position = idIndex.positionOf(id);
        return position == null ? null : documents.get(position);
    }

    @Override
    protected Document getDocument(Integer position) {
        return documents.get(position);
    }

    @Override
    protected Integer findDocumentPosition(Document document) {
        for (int i = 0; i < documents.size(); i++) {
            Document stored = documents.get(i);
            if (stored != null && (stored == document || stored.equals(document))) {
                return i;
            }
        }
        return null;
    }

    @Override
    protected Stream<DocumentWithPosition<Integer>> streamAllDocumentsWithPosition() {
        return IntStream.range(0, documents.size())
            .filter(i -> documents.get(i) != null)
            .mapToObj(i -> new DocumentWithPosition<>(documents.get(i), i));
    }

    /** A copy of the live documents, for the snapshot writer (stored documents are never modified). */
    synchronized List<Document> liveDocuments() {
        List<Document> live = new ArrayList<>(count());
        for (Document document : documents) {
            if (document != null) {
                live.add(document);
            }
        }
        return live;
    }

    @Override
    public synchronized int count() {
        return documents.size() - freePositions.size();
    }

    @Override
    public synchronized boolean isEmpty() {
        return count() == 0;
    }

    @Override
    public synchronized void addIndex(Index<Integer> index) {
        super.addIndex(index);
    }

    @Override
    public synchronized void dropIndex(String indexName) {
        super.dropIndex(indexName);
    }

    @Override
    public synchronized void drop() {
        super.drop();
        if (journaled) {
            store.adjustLiveBytes(-dataSize);
        }
        documents.clear();
        freePositions.clear();
        sizes = new int[16];
        dataSize = 0;
    }

    // ------------------------------------------------------------------------------------------
    // Updates: the superclass applies an update to the document a query returns; hand it a copy.

    @Override
    public synchronized Document updateDocuments(Document selector, Document updateQuery, ArrayFilters arrayFilters,
                                                 boolean isMulti, boolean isUpsert, Oplog oplog) {
        boolean before = copyResults;
        copyResults = true;
        try {
            return super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog);
        } finally {
            copyResults = before;
        }
    }

    @Override
    public synchronized Document findAndModify(Document query) {
        boolean before = copyResults;
        copyResults = query.get("update") != null;
        try {
            return super.findAndModify(query);
        } finally {
            copyResults = before;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Queries

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        List<OrderedIndex> indexes = new ArrayList<>(getIndexes().size());
        for (Index<Integer> index : getIndexes()) {
            indexes.add((OrderedIndex) index);
        }
        QueryPlanner.Plan plan = QueryPlanner.choose(indexes, query, orderBy, limit);
        long[] examinedCounter = new long[1];
        Stream<Document> candidates;
        Comparator<Document> comparator;
        if (plan == null) {
            candidates = scan(isNaturalDescending(orderBy));
            comparator = deriveComparator(orderBy);
        } else {
            candidates = StreamSupport.stream(
                Spliterators.spliteratorUnknownSize(planIterator(plan), Spliterator.ORDERED), false)
                .map(documents::get);
            comparator = plan.servesSort ? null : deriveComparator(orderBy);
        }
        long[] matchedCounter = new long[1];
        candidates = candidates.peek(d -> examinedCounter[0]++)
            .filter(d -> documentMatchesQuery(d, query))
            .peek(d -> matchedCounter[0]++);
        if (copyResults) {
            candidates = candidates.map(Document::cloneDeeply);
        }
        // The superclass matches again (cheap: only matching documents reach it), sorts, skips, limits, projects.
        QueryResult result = matchDocumentsFromStream(query, candidates, numberToSkip, limit, batchSize, comparator, fieldSelector);
        record(query, orderBy, plan, examinedCounter[0], matchedCounter[0]);
        return result;
    }

    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        // Only reached through the superclass's queryDocuments, which this class replaces.
        return queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    private Stream<Document> scan(boolean descending) {
        int n = documents.size();
        IntStream positions = descending ? IntStream.range(0, n).map(i -> n - 1 - i) : IntStream.range(0, n);
        return positions.mapToObj(documents::get).filter(Objects::nonNull);
    }

    /** Positions from the plan's index ranges: in index order when it serves the sort, de-duplicated otherwise. */
    private Iterator<Integer> planIterator(QueryPlanner.Plan plan) {
        int positionSlot = plan.index.keyCount();
        if (plan.servesSort) {
            Object[][] b = QueryPlanner.bounds(plan, plan.prefixes.get(0));
            Iterator<Object[]> entries = plan.index.range(b[0], b[1], plan.descending);
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return entries.hasNext();
                }

                @Override
                public Integer next() {
                    if (!entries.hasNext()) {
                        throw new NoSuchElementException();
                    }
                    return (Integer) entries.next()[positionSlot];
                }
            };
        }
        Set<Integer> positions = new LinkedHashSet<>();
        for (Object[] prefix : plan.prefixes) {
            Object[][] b = QueryPlanner.bounds(plan, prefix);
            Iterator<Object[]> entries = plan.index.range(b[0], b[1], false);
            while (entries.hasNext()) {
                positions.add((Integer) entries.next()[positionSlot]);
            }
        }
        return positions.iterator();
    }

    /**
     * How many documents match {@code query}, read off an index alone without fetching or matching a
     * document (MongoDB's COUNT_SCAN), or null when an index cannot say it exactly. Exact only for
     * this shape: every field of the query is a top-level field compared with strings by equality
     * or {@code $in}, and those fields are exactly the leading keys the chosen index pins, none of
     * which has ever held a document or a nested array (OrderedIndex keys those by a normalised form
     * that can equal a string). A string is then the same key in the index as in the matcher (the
     * value itself, or an element of an array), and a document whose array holds a value
     * twice, or that several {@code $in} values reach, counts once: positions are counted, not
     * entries. A count over the chunks of a 100,000-chunk collection (a search index's cold load
     * checks one) took 1-1.5 s of the store's CPU on a freshly started store through the matcher.
     */
    synchronized Long countThroughIndex(Document query) {
        if (query.isEmpty()) {
            return null;
        }
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            if (entry.getKey().startsWith("$") || entry.getKey().indexOf('.') >= 0 || !isStringEquality(entry.getValue())) {
                return null;
            }
        }
        List<OrderedIndex> indexes = new ArrayList<>(getIndexes().size());
        for (Index<Integer> index : getIndexes()) {
            indexes.add((OrderedIndex) index);
        }
        QueryPlanner.Plan plan = QueryPlanner.choose(indexes, query, null, 0);
        if (plan == null || plan.range != null || plan.prefixes.get(0).length != query.size()) {
            return null;
        }
        for (int k = 0; k < query.size(); k++) {
            if (!query.containsKey(plan.index.path(k)) || plan.index.hasHeldNested(k)) {
                return null;
            }
        }
        int positionSlot = plan.index.keyCount();
        java.util.BitSet positions = new java.util.BitSet();
        for (Object[] prefix : plan.prefixes) {
            Object[][] b = QueryPlanner.bounds(plan, prefix);
            Iterator<Object[]> entries = plan.index.range(b[0], b[1], false);
            while (entries.hasNext()) {
                positions.set((Integer) entries.next()[positionSlot]);
            }
        }
        long count = positions.cardinality();
        record(query, null, "COUNT_SCAN " + plan.index.getName(), 0, count);
        return count;
    }

    /** A string, {@code {$eq: string}} or {@code {$in: [strings]}} (not empty): nothing else. */
    private static boolean isStringEquality(Object value) {
        if (value instanceof String) {
            return true;
        }
        if (!(value instanceof Document operator) || operator.size() != 1) {
            return false;
        }
        Object operand = operator.get("$eq");
        if (operand != null) {
            return operand instanceof String;
        }
        if (operator.get("$in") instanceof List<?> values && !values.isEmpty()) {
            for (Object v : values) {
                if (!(v instanceof String)) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------
    // Statistics (engramStats)

    static final class ShapeStats {
        final String shape;
        final String plan;
        long count;
        long examined;
        long returned;
        long maxExamined;

        ShapeStats(String shape, String plan) {
            this.shape = shape;
            this.plan = plan;
        }
    }

    private void record(Document query, Document orderBy, QueryPlanner.Plan plan, long docsExamined, long n) {
        record(query, orderBy, plan == null ? "COLLSCAN" : "IXSCAN " + plan.index.getName(), docsExamined, n);
    }

    private void record(Document query, Document orderBy, String planName, long docsExamined, long n) {
        queries++;
        examined += docsExamined;
        returned += n;
        if (planName.equals("COLLSCAN")) {
            collectionScans++;
            collectionScanExamined += docsExamined;
        }
        String shape = shapeOf(query) + (orderBy == null || orderBy.isEmpty() ? "" : " sort " + shapeOf(orderBy));
        String key = shape + " | " + planName;
        ShapeStats stats = shapes.get(key);
        if (stats == null) {
            if (shapes.size() >= 500) {
                return;
            }
            stats = new ShapeStats(shape, planName);
            shapes.put(key, stats);
        }
        stats.count++;
        stats.examined += docsExamined;
        stats.returned += n;
        stats.maxExamined = Math.max(stats.maxExamined, docsExamined);
    }

    /** The query's field names and operators, without its values. */
    static String shapeOf(Object value) {
        if (value instanceof Document doc) {
            StringBuilder sb = new StringBuilder("{");
            boolean first = true;
            for (Map.Entry<String, Object> e : doc.entrySet()) {
                if (!first) {
                    sb.append(", ");
                }
                first = false;
                sb.append(e.getKey());
                Object v = e.getValue();
                if (e.getKey().equals("$and") || e.getKey().equals("$or") || e.getKey().equals("$nor")) {
                    sb.append(": [");
                    if (v instanceof List<?> list) {
                        for (int i = 0; i < list.size(); i++) {
                            sb.append(i > 0 ? ", " : "").append(shapeOf(list.get(i)));
                        }
                    }
                    sb.append("]");
                } else if (v instanceof Document d && !d.isEmpty() && d.keySet().iterator().next().startsWith("$")) {
                    sb.append(": ").append(shapeOf(d));
                } else if (v instanceof Number num && (num.intValue() == 1 || num.intValue() == -1) && e.getKey().indexOf('$') < 0) {
                    sb.append(": ").append(num.intValue());
                }
            }
            return sb.append("}").toString();
        }
        return "?";
    }

    synchronized Document stats(boolean reset) {
        Document doc = new Document("ns", getFullName())
            .append("count", count())
            .append("dataBytes", dataSize)
            .append("queries", queries)
            .append("docsExamined", examined)
            .append("docsReturned", returned)
            .append("collectionScans", collectionScans)
            .append("collectionScanDocsExamined", collectionScanExamined);
        List<Document> indexes = new ArrayList<>();
        for (Index<Integer> index : getIndexes()) {
            indexes.add(new Document("name", index.getName()).append("entries", index.getCount()));
        }
        doc.append("indexes", indexes);
        List<Document> shapeList = new ArrayList<>();
        for (ShapeStats s : shapes.values()) {
            shapeList.add(new Document("shape", s.shape).append("plan", s.plan).append("count", s.count)
                .append("docsExamined", s.examined).append("docsReturned", s.returned).append("maxDocsExamined", s.maxExamined));
        }
        doc.append("shapes", shapeList);
        if (reset) {
            shapes.clear();
            queries = examined = returned = collectionScans = collectionScanExamined = 0;
        }
        return doc;
    }
}
