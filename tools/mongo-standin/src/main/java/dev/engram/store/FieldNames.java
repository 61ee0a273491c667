package dev.engram.store;

import de.bwaldvogel.mongo.bson.Document;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One String per field name across every stored document. The wire decoder makes a new String
 * for each key of each document, and keys are most of what a stored document holds besides its
 * values: a heap histogram of the whole bench (1.8M documents, about 14 fields each) showed 26M
 * Strings and their byte arrays taking about 1.2 GB of the 4.2 GB heap when the store ran out of
 * memory, nearly all of them copies of the same few hundred names.
 *
 * <p>Documents are stored as copies whose keys (nested documents and arrays included) are the
 * shared instances. Names beyond {@link #MAX_NAMES} distinct ones (a document keyed by data) are
 * kept as decoded, so the table cannot grow without bound.
 *
 * <p>String values are not interned (an interner would hold every id ever seen), but a collection
 * shares a value with the document stored before it when the same field held an equal string
 * there: a tenant's id, a collection's id, a model's name, a kind, and a memory's id across its
 * chunks and mentions arrive in runs, and one instance then serves the run.
 */
final class FieldNames {

    static final int MAX_NAMES = 65_536;

    /** Longer strings (texts) are rarely repeated, and comparing them would cost more than it saves. */
    private static final int MAX_SHARED_VALUE = 128;

    private static final Map<String, String> NAMES = new ConcurrentHashMap<>();

    static String intern(String name) {
        String shared = NAMES.get(name);
        if (shared != null) {
            return shared;
        }
        if (NAMES.size() >= MAX_NAMES) {
            return name;
        }
        shared = NAMES.putIfAbsent(name, name);
        return shared == null ? name : shared;
    }

    /** The last string value stored under each field name (by the name's shared instance). */
    private final Map<String, String> lastValues = new HashMap<>();

    /**
     * A copy of the document with shared key instances, and string values shared with the previous
     * document's where equal; other values are the same objects. Not thread-safe: one per collection,
     * used under its lock.
     */
    Document share(Document document) {
        Document copy = new Document();
        for (Map.Entry<String, Object> entry : document.entrySet()) {
            String key = intern(entry.getKey());
            copy.put(key, shareValue(key, entry.getValue()));
        }
        return copy;
    }

    private Object shareValue(String key, Object value) {
        if (value instanceof String text) {
            if (text.length() > MAX_SHARED_VALUE) {
                return text;
            }
            String last = lastValues.get(key);
            if (text.equals(last)) {
                return last;
            }
            if (lastValues.size() < MAX_NAMES || last != null) {
                lastValues.put(key, text);
            }
            return text;
        }
        if (value instanceof Document nested) {
            return share(nested);
        }
        if (value instanceof List<?> list) {
            List<Object> copy = new ArrayList<>(list.size());
            for (Object item : list) {
                copy.add(shareValue(key, item));
            }
            return copy;
        }
        return value;
    }
}
