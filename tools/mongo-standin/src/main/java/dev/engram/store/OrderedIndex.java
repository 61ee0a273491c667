package dev.engram.store;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.DuplicateKeyError;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * A sorted (B-tree-like) index over one or more keys, unique or not, for the in-heap collections
 * of {@link EngramCollection}. mongo-java-server only implements unique indexes, and only serves
 * queries whose fields are exactly the index's keys; everything else scans the whole collection.
 *
 * <p>Each entry is {@code [value of key 1, ..., value of key n, position]}, kept in a TreeSet ordered
 * by the keys (each in its own direction) and then by position, so one structure serves equality
 * and {@code $in} on leading keys, a range on the next key, and a sort on the following keys in
 * index order. Arrays are indexed by element (a "multikey" index), as MongoDB does; once a key has
 * held an array, that key is no longer used for ranges or for sorting (as with MongoDB's multikey
 * rules). Values are normalised the way mongo-java-server compares them (every number as a double
 * unless a long cannot be one), so {@code 1}, {@code 1L} and {@code 1.0} are the same key.
 *
 * <p>Not thread-safe by itself: every call happens under the owning collection's lock.
 */
final class OrderedIndex extends Index<Integer> {

    /** Bound sentinels: LOW sorts before every value, HIGH after every value. */
    static final Object LOW = new Object() {
        @Override
        public String toString() {
            return "LOW";
        }
    };
    static final Object HIGH = new Object() {
        @Override
        public String toString() {
            return "HIGH";
        }
    };

    private final boolean unique;
    private final boolean sparse;
    private final String[] paths;
    private final int[] directions;
    private final boolean[] multikey;
    /**
     * Whether a key has held a document, or an array inside an array: such a value is keyed by a
     * normalised form that can equal a plain value the matcher would not match it with, so counts
     * off the index alone are exact only for keys that never held one. Sticky, as multikey is.
     */
    private final boolean[] nested;
    private final NavigableSet<Object[]> entries;
    private final Comparator<Object[]> comparator;
    /** While a store is being loaded, unique violations between intermediate states are expected. */
    private final UniqueEnforcement enforcement;

    interface UniqueEnforcement {
        boolean enforcing();
    }

    OrderedIndex(String name, List<IndexKey> keys, boolean sparse, boolean unique, UniqueEnforcement enforcement) {
        super(name, keys, sparse);
        this.unique = unique;
        this.sparse = sparse;
        this.enforcement = enforcement;
        this.paths = keys.stream().map(IndexKey::getKey).toArray(String[]::new);
        this.directions = keys.stream().mapToInt(k -> k.isAscending() ? 1 : -1).toArray();
        this.multikey = new boolean[paths.length];
        this.nested = new boolean[paths.length];
        this.comparator = new EntryComparator(directions);
        this.entries = new TreeSet<>(comparator);
    }

    int keyCount() {
        return paths.length;
    }

    String path(int i) {
        return paths[i];
    }

    int direction(int i) {
        return directions[i];
    }

    boolean isMultikey(int i) {
        return multikey[i];
    }

    /** Whether key {@code i} has held a document or a nested array (see {@code nested}). */
    boolean hasHeldNested(int i) {
        return nested[i];
    }

    boolean sparse() {
        return sparse;
    }

    @Override
    public boolean isUnique() {
        return unique;
    }

    @Override
    protected boolean isSparse() {
        return sparse;
    }

    /** Compares key tuples (and bounds with sentinels) the way the index orders them. */
    Comparator<Object[]> comparator() {
        return comparator;
    }

    // ------------------------------------------------------------------------------------------
    // Keys of a document

    /** Every key tuple of a document (more than one when a key holds an array); empty if sparse and absent. */
    List<Object[]> keyTuples(Document document) {
        List<List<Object>> perKey = new ArrayList<>(paths.length);
        boolean anyPresent = false;
        for (int i = 0; i < paths.length; i++) {
            Object value = Utils.getSubdocumentValueCollectionAware(document, paths[i]);
            if (!(value instanceof Missing)) {
                anyPresent = true;
            }
            List<Object> values;
            if (value instanceof Collection<?> collection) {
                if (collection.isEmpty()) {
                    // MongoDB keys an empty array as undefined; null is a safe stand-in (queries re-check).
                    values = new ArrayList<>(1);
                    values.add(null);
                } else {
                    LinkedHashSet<Object> distinct = new LinkedHashSet<>();
                    for (Object element : collection) {
                        if (element instanceof Map<?, ?> || element instanceof Collection<?>) {
                            nested[i] = true;
                        }
                        distinct.add(normalize(element));
                    }
                    values = new ArrayList<>(distinct);
                }
                multikey[i] = true;
            } else {
                if (value instanceof Map<?, ?>) {
                    nested[i] = true;
                }
                values = new ArrayList<>(1);
                values.add(normalize(value));
            }
            perKey.add(values);
        }
        if (sparse && !anyPresent) {
            return List.of();
        }
        List<Object[]> tuples = new ArrayList<>();
        tuples.add(new Object[paths.length + 1]);
        for (int i = 0; i < paths.length; i++) {
            List<Object> values = perKey.get(i);
            if (values.size() == 1) {
                for (Object[] tuple : tuples) {
                    tuple[i] = values.get(0);
                }
            } else {
                List<Object[]> next = new ArrayList<>(tuples.size() * values.size());
                for (Object[] tuple : tuples) {
                    for (Object value : values) {
                        Object[] copy = tuple.clone();
                        copy[i] = value;
                        next.add(copy);
                    }
                }
                tuples = next;
            }
        }
        return tuples;
    }

    /** The normalised form of a value, as keys and query values are compared. */
    static Object normalize(Object value) {
        if (value == null || value instanceof Missing) {
            return null;
        }
        if (value instanceof Long l) {
            if (l.longValue() != (long) l.doubleValue()) {
                return l;
            }
            double d = l.doubleValue();
            return Double.valueOf(d == -0.0 ? 0.0 : d);
        }
        if (value instanceof Number n) {
            if (value instanceof de.bwaldvogel.mongo.bson.Decimal128) {
                return value;
            }
            double d = n.doubleValue();
            return Double.valueOf(d == -0.0 ? 0.0 : d);
        }
        if (value instanceof Map<?, ?> || value instanceof Collection<?>) {
            return new KeyValue(value).normalized().get(0);
        }
        return value;
    }

    // ------------------------------------------------------------------------------------------
    // Maintenance (called by the collection under its lock)

    private boolean enforcingUnique() {
        return unique && enforcement.enforcing();
    }

    /** The position of another document holding this key tuple, or null. */
    private Integer otherHolder(Object[] tuple, Integer except) {
        Object[] low = Arrays.copyOf(tuple, paths.length + 1);
        low[paths.length] = LOW;
        Object[] high = Arrays.copyOf(tuple, paths.length + 1);
        high[paths.length] = HIGH;
        for (Object[] entry : entries.subSet(low, true, high, true)) {
            Integer position = (Integer) entry[paths.length];
            if (!position.equals(except)) {
                return position;
            }
        }
        return null;
    }

    private DuplicateKeyError duplicate(MongoCollection<Integer> collection, Object[] tuple) {
        return new DuplicateKeyError(this, collection, getKeys(), new KeyValue(Arrays.asList(tuple).subList(0, paths.length)));
    }

    @Override
    public void checkAdd(Document document, MongoCollection<Integer> collection) {
        if (!enforcingUnique()) {
            return;
        }
        for (Object[] tuple : keyTuples(document)) {
            if (otherHolder(tuple, null) != null) {
                throw duplicate(collection, tuple);
            }
        }
    }

    @Override
    public void add(Document document, Integer position, MongoCollection<Integer> collection) {
        List<Object[]> tuples = keyTuples(document);
        if (enforcingUnique()) {
            for (Object[] tuple : tuples) {
                if (otherHolder(tuple, position) != null) {
                    throw duplicate(collection, tuple);
                }
            }
        }
        for (Object[] tuple : tuples) {
            tuple[paths.length] = position;
            entries.add(tuple);
        }
    }

    /** Removes the entries of a document stored at a position. */
    void removeAt(Document document, Integer position) {
        for (Object[] tuple : keyTuples(document)) {
            tuple[paths.length] = position;
            entries.remove(tuple);
        }
    }

    @Override
    public Integer remove(Document document) {
        Integer position = getPosition(document);
        if (position != null) {
            removeAt(document, position);
        }
        return position;
    }

    @Override
    public Integer getPosition(Document document) {
        if (!unique) {
            return null;
        }
        for (Object[] tuple : keyTuples(document)) {
            Integer position = otherHolder(tuple, null);
            if (position != null) {
                return position;
            }
        }
        return null;
    }

    /** The position of the document whose (single-key, unique) index value is this, or null. */
    Integer positionOf(Object value) {
        Object[] tuple = new Object[paths.length + 1];
        tuple[0] = normalize(value);
        return otherHolder(tuple, null);
    }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
        if (!enforcingUnique()) {
            return;
        }
        Integer oldPosition = getPosition(oldDocument);
        for (Object[] tuple : keyTuples(newDocument)) {
            Integer holder = otherHolder(tuple, oldPosition);
            if (holder != null) {
                throw duplicate(collection, tuple);
            }
        }
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, Integer position, MongoCollection<Integer> collection) {
        List<Object[]> oldTuples = keyTuples(oldDocument);
        List<Object[]> newTuples = keyTuples(newDocument);
        if (sameTuples(oldTuples, newTuples)) {
            return;
        }
        for (Object[] tuple : oldTuples) {
            tuple[paths.length] = position;
            entries.remove(tuple);
        }
        for (Object[] tuple : newTuples) {
            tuple[paths.length] = position;
            entries.add(tuple);
        }
    }

    private boolean sameTuples(List<Object[]> a, List<Object[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        Comparator<Object[]> cmp = comparator;
        for (int i = 0; i < a.size(); i++) {
            a.get(i)[paths.length] = 0;
            b.get(i)[paths.length] = 0;
            if (cmp.compare(a.get(i), b.get(i)) != 0) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------------------------------
    // Reads

    /** Entries between two bounds (arrays of key values ending in LOW or HIGH), in index order or reversed. */
    Iterator<Object[]> range(Object[] low, Object[] high, boolean descending) {
        NavigableSet<Object[]> sub = entries.subSet(low, true, high, true);
        return descending ? sub.descendingIterator() : sub.iterator();
    }

    /** The superclass's own planner is never used: EngramCollection plans its queries itself. */
    @Override
    public boolean canHandle(Document query) {
        return false;
    }

    @Override
    public Iterable<Integer> getPositions(Document query) {
        throw new UnsupportedOperationException("EngramCollection plans its own queries");
    }

    @Override
    public long getCount() {
        return entries.size();
    }

    @Override
    public long getDataSize() {
        // Rough: one tree node and one tuple per entry.
        return (long) entries.size() * (64L + 8L * paths.length);
    }

    @Override
    public void drop() {
        entries.clear();
    }

    Set<String> pathSet() {
        return new LinkedHashSet<>(Arrays.asList(paths));
    }

    /** mongo-java-server's order, with a fast path for the common same-type keys (its own walks a type table). */
    static int compareValues(Object x, Object y) {
        if (x == y) {
            return 0;
        }
        if (x instanceof String a && y instanceof String b) {
            return a.compareTo(b);
        }
        if (x instanceof Double a && y instanceof Double b) {
            return Double.compare(a, b);
        }
        if (x instanceof java.time.Instant a && y instanceof java.time.Instant b) {
            return a.compareTo(b);
        }
        return ValueComparator.asc().compare(x, y);
    }

    /** Orders entries by each key in its direction, then by position; LOW/HIGH bound any prefix. */
    private static final class EntryComparator implements Comparator<Object[]> {
        private final int[] directions;

        EntryComparator(int[] directions) {
            this.directions = directions;
        }

        @Override
        public int compare(Object[] a, Object[] b) {
            int n = Math.max(a.length, b.length);
            for (int i = 0; i < n; i++) {
                Object x = i < a.length ? a[i] : null;
                Object y = i < b.length ? b[i] : null;
                if (x == LOW) {
                    return y == LOW ? 0 : -1;
                }
                if (x == HIGH) {
                    return y == HIGH ? 0 : 1;
                }
                if (y == LOW) {
                    return 1;
                }
                if (y == HIGH) {
                    return -1;
                }
                int c;
                if (i == directions.length) {
                    c = Integer.compare((Integer) x, (Integer) y);
                } else {
                    c = compareValues(x, y) * directions[i];
                }
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        }
    }
}
