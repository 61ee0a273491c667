package dev.engram.store;

import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses an index for a query, as MongoDB's planner would for these simple shapes: equality or
 * {@code $in} on the index's leading keys, then a range on the next key, then a sort that the index
 * order already gives (so a limit stops early). The query is always re-checked document by
 * document, so a plan only has to return a superset of the matches: when in doubt a constraint is
 * left out, never guessed.
 */
final class QueryPlanner {

    private QueryPlanner() {
    }

    /** What a query says about one top-level field that an index can use. */
    static final class Constraint {
        /** Normalised values for equality / $in, or null. */
        List<Object> equals;
        Object low;
        boolean lowInclusive;
        Object high;
        boolean highInclusive;

        boolean hasRange() {
            return low != null || high != null;
        }
    }

    /** A chosen plan: the index, how many leading keys are pinned, and whether it serves the sort. */
    static final class Plan {
        final OrderedIndex index;
        /** One array of leading key values per index range to read (the product of the $in lists). */
        final List<Object[]> prefixes;
        final Constraint range;
        final boolean servesSort;
        final boolean descending;

        Plan(OrderedIndex index, List<Object[]> prefixes, Constraint range, boolean servesSort, boolean descending) {
            this.index = index;
            this.prefixes = prefixes;
            this.range = range;
            this.servesSort = servesSort;
            this.descending = descending;
        }
    }

    private static final int MAX_PREFIXES = 4096;

    /** Field constraints of a query's top level (and of a top-level $and). */
    static Map<String, Constraint> constraints(Document query) {
        Map<String, Constraint> result = new LinkedHashMap<>();
        collect(query, result);
        return result;
    }

    private static void collect(Document query, Map<String, Constraint> result) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            String field = entry.getKey();
            Object value = entry.getValue();
            if (field.equals("$and") && value instanceof Collection<?> parts) {
                for (Object part : parts) {
                    if (part instanceof Document doc) {
                        collect(doc, result);
                    }
                }
                continue;
            }
            if (field.startsWith("$")) {
                continue;
            }
            if (result.containsKey(field) && result.get(field).equals != null) {
                continue;
            }
            Constraint constraint = constraintOf(value);
            if (constraint != null) {
                Constraint existing = result.get(field);
                if (existing == null || constraint.equals != null) {
                    result.put(field, constraint);
                }
            }
        }
    }

    /** A plain value MongoDB compares by equality and an index can look up; arrays and documents are left to the matcher. */
    private static boolean indexable(Object value) {
        return !(value instanceof Collection<?>) && !(value instanceof Map<?, ?>) && !(value instanceof BsonRegularExpression);
    }

    private static Constraint constraintOf(Object value) {
        if (value instanceof Document doc && !doc.isEmpty() && doc.keySet().iterator().next().startsWith("$")) {
            Constraint c = new Constraint();
            for (Map.Entry<String, Object> op : doc.entrySet()) {
                Object operand = op.getValue();
                switch (op.getKey()) {
                    case "$eq" -> {
                        if (indexable(operand)) {
                            c.equals = java.util.Collections.singletonList(normalizeNullable(operand));
                        }
                    }
                    case "$in" -> {
                        if (operand instanceof Collection<?> values && !values.isEmpty()) {
                            List<Object> list = new ArrayList<>(values.size());
                            boolean ok = true;
                            for (Object v : values) {
                                if (!indexable(v)) {
                                    ok = false;
                                    break;
                                }
                                list.add(normalizeNullable(v));
                            }
                            if (ok) {
                                c.equals = list;
                            }
                        }
                    }
                    case "$gt", "$gte" -> {
                        if (operand != null && indexable(operand)) {
                            c.low = OrderedIndex.normalize(operand);
                            c.lowInclusive = op.getKey().equals("$gte");
                        }
                    }
                    case "$lt", "$lte" -> {
                        if (operand != null && indexable(operand)) {
                            c.high = OrderedIndex.normalize(operand);
                            c.highInclusive = op.getKey().equals("$lte");
                        }
                    }
                    default -> {
                        // $ne, $exists, $nin, $elemMatch, $regex, ...: the matcher checks them.
                    }
                }
            }
            return (c.equals != null || c.hasRange()) ? c : null;
        }
        if (!indexable(value)) {
            return null;
        }
        Constraint c = new Constraint();
        c.equals = java.util.Collections.singletonList(normalizeNullable(value));
        return c;
    }

    private static Object normalizeNullable(Object value) {
        return OrderedIndex.normalize(value);
    }

    /**
     * The best plan for a query among the indexes, or null for a collection scan. Scores pinned
     * leading keys highest, then a range, then serving the sort.
     */
    static Plan choose(List<OrderedIndex> indexes, Document query, Document orderBy, int limit) {
        Map<String, Constraint> constraints = constraints(query);
        List<String> sortKeys = new ArrayList<>();
        List<Integer> sortDirections = new ArrayList<>();
        if (orderBy != null) {
            for (Map.Entry<String, Object> e : orderBy.entrySet()) {
                if (e.getKey().equals("$natural")) {
                    return null;
                }
                sortKeys.add(e.getKey());
                sortDirections.add(((Number) e.getValue()).intValue() >= 0 ? 1 : -1);
            }
        }
        Plan best = null;
        int bestScore = 0;
        for (OrderedIndex index : indexes) {
            int n = index.keyCount();
            int pinned = 0;
            long combinations = 1;
            boolean nullLookup = false;
            while (pinned < n) {
                Constraint c = constraints.get(index.path(pinned));
                if (c == null || c.equals == null) {
                    break;
                }
                if (combinations * c.equals.size() > MAX_PREFIXES) {
                    break;
                }
                if (c.equals.contains(null)) {
                    nullLookup = true;
                }
                combinations *= c.equals.size();
                pinned++;
            }
            if (index.sparse() && nullLookup) {
                // A sparse index has no entry for a document without the field, which {field: null} matches.
                continue;
            }
            Constraint range = null;
            if (pinned < n) {
                Constraint c = constraints.get(index.path(pinned));
                if (c != null && c.equals == null && c.hasRange() && !index.isMultikey(pinned)) {
                    range = c;
                }
            }
            boolean servesSort = false;
            boolean descending = false;
            if (!sortKeys.isEmpty() && combinations == 1 && !(index.sparse() && pinned == 0 && range == null)) {
                int from = pinned;
                if (from + sortKeys.size() <= n) {
                    Boolean reversed = null;
                    boolean ok = true;
                    for (int i = 0; i < sortKeys.size() && ok; i++) {
                        int k = from + i;
                        if (!index.path(k).equals(sortKeys.get(i)) || index.isMultikey(k)) {
                            ok = false;
                            break;
                        }
                        boolean rev = index.direction(k) != sortDirections.get(i);
                        if (reversed == null) {
                            reversed = rev;
                        } else if (reversed != rev) {
                            ok = false;
                        }
                    }
                    if (ok) {
                        servesSort = true;
                        descending = Boolean.TRUE.equals(reversed);
                    }
                }
            }
            int score = pinned * 8 + (range != null ? 4 : 0) + (servesSort ? (limit > 0 ? 3 : 2) : 0);
            if (index.isUnique() && pinned == n) {
                score += 1;
            }
            if (score <= 0 || (pinned == 0 && range == null && !servesSort)) {
                continue;
            }
            if (score > bestScore || (score == bestScore && best != null && n < best.index.keyCount())) {
                List<Object[]> prefixes = new ArrayList<>();
                prefixes.add(new Object[0]);
                for (int k = 0; k < pinned; k++) {
                    List<Object> values = constraints.get(index.path(k)).equals;
                    List<Object[]> next = new ArrayList<>(prefixes.size() * values.size());
                    for (Object[] prefix : prefixes) {
                        for (Object v : values) {
                            Object[] p = java.util.Arrays.copyOf(prefix, k + 1);
                            p[k] = v;
                            next.add(p);
                        }
                    }
                    prefixes = next;
                }
                best = new Plan(index, prefixes, range, servesSort, descending);
                bestScore = score;
            }
        }
        return best;
    }

    /**
     * The low and high bounds (in index order) of one index range: a pinned prefix, then the range
     * on the next key. A one-sided range stops short of null and missing values, which MongoDB's
     * type bracketing never matches ({@code {at: {$lte: date}}} skips documents without {@code at}).
     */
    static Object[][] bounds(Plan plan, Object[] prefix) {
        int k = prefix.length;
        Constraint r = plan.range;
        if (r == null) {
            return new Object[][] {bound(prefix, OrderedIndex.LOW), bound(prefix, OrderedIndex.HIGH)};
        }
        Object[] low;
        Object[] high;
        if (plan.index.direction(k) > 0) {
            // Ascending: nulls first, then small to large.
            low = r.low != null ? bound(prefix, r.low, r.lowInclusive ? OrderedIndex.LOW : OrderedIndex.HIGH)
                : bound(prefix, null, OrderedIndex.HIGH);
            high = r.high != null ? bound(prefix, r.high, r.highInclusive ? OrderedIndex.HIGH : OrderedIndex.LOW)
                : bound(prefix, OrderedIndex.HIGH);
        } else {
            // Descending: large to small, nulls last.
            low = r.high != null ? bound(prefix, r.high, r.highInclusive ? OrderedIndex.LOW : OrderedIndex.HIGH)
                : bound(prefix, OrderedIndex.LOW);
            high = r.low != null ? bound(prefix, r.low, r.lowInclusive ? OrderedIndex.HIGH : OrderedIndex.LOW)
                : bound(prefix, null, OrderedIndex.LOW);
        }
        return new Object[][] {low, high};
    }

    private static Object[] bound(Object[] prefix, Object... tail) {
        Object[] b = java.util.Arrays.copyOf(prefix, prefix.length + tail.length);
        System.arraycopy(tail, 0, b, prefix.length, tail.length);
        return b;
    }
}
