package dev.engram.store;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Durability for the in-heap collections: a redo journal of resulting document states, and
 * snapshots that replace it.
 *
 * <ul>
 * <li>Every change a write command makes is encoded, while the collection's lock is held (so two
 * changes to one document are journaled in the order they happened), as a record: the document's
 * new state, or its deletion. {@link #commit()} writes the records to the journal file (the OS's
 * page cache) before the command's reply is sent. A SIGKILL of the process therefore loses
 * nothing that was acknowledged; an OS crash or power cut can lose what was written since the last
 * fsync, which runs every {@code fsyncIntervalMillis} (default 100 ms).</li>
 * <li>When the files hold more than twice the live data (plus a little slack), a compaction starts
 * a new journal, writes every collection (its index definitions and documents) to
 * {@code snapshot.tmp}, fsyncs it, renames it over {@code snapshot.bin} and deletes the older
 * journals. Records are states, not commands, so replaying the new journal over a snapshot taken
 * while writes went on gives the final state whichever of the two saw a change first.</li>
 * <li>On start: the snapshot (which must end with its END record), then each journal from the
 * snapshot's sequence on, each up to its first torn or damaged record.</li>
 * </ul>
 */
final class EngramStore implements OrderedIndex.UniqueEnforcement {

    private static final Pattern JOURNAL_NAME = Pattern.compile("journal-(\\d{9})\\.log");
    static final String SNAPSHOT = "snapshot.bin";
    private static final String SNAPSHOT_TMP = "snapshot.tmp";
    /** Files may exceed 2x the live data by this much before a compaction (keeps small stores from compacting constantly). */
    private static final long COMPACT_SLACK_BYTES = 8L * 1024 * 1024;

    private final Path dir;
    private final long fsyncIntervalMillis;
    private volatile boolean loading;
    private final Object lock = new Object();
    private ByteBuf pending = Unpooled.buffer(1 << 16);
    private FileChannel journal;
    private long journalNumber;
    private volatile long journalBytes;
    private volatile long snapshotBytes;
    private boolean unsynced;
    private final AtomicLong liveBytes = new AtomicLong();
    private final AtomicBoolean compacting = new AtomicBoolean();
    private final AtomicLong compactions = new AtomicLong();
    private volatile long lastCompactionMillis;
    private volatile String lastCompactionError;
    private volatile long loadMillis;
    private volatile long loadedRecords;
    private volatile long tornTails;
    private final List<String> loadWarnings = new ArrayList<>();
    private final ThreadLocal<ByteBuf> scratch = ThreadLocal.withInitial(() -> Unpooled.buffer(4096));
    private EngramBackend backend;
    private Thread fsyncThread;

    /** @param dir where the files live, or null for a store kept in memory only */
    EngramStore(Path dir, long fsyncIntervalMillis) {
        this.dir = dir;
        this.fsyncIntervalMillis = fsyncIntervalMillis;
    }

    boolean persistent() {
        return dir != null;
    }

    @Override
    public boolean enforcing() {
        return !loading;
    }

    boolean shouldJournal() {
        return dir != null && !loading;
    }

    // ------------------------------------------------------------------------------------------
    // Recording changes (called under the collection's lock)

    /** Journals a document's new state (if journaled); returns its BSON size. */
    int recordPut(EngramCollection collection, Document document, boolean journaled) {
        ByteBuf buf = scratch.get();
        buf.clear();
        if (!journaled || !shouldJournal()) {
            BsonEncoder.encodeDocument(document, buf);
            int size = buf.writerIndex();
            trimScratch(buf);
            return size;
        }
        int size = RecordFile.encode(buf, RecordFile.PUT, collection.getDatabaseName(), collection.getCollectionName(), document);
        append(buf);
        return size;
    }

    void recordDelete(EngramCollection collection, Object id, boolean journaled) {
        if (!journaled || !shouldJournal()) {
            return;
        }
        ByteBuf buf = scratch.get();
        buf.clear();
        RecordFile.encode(buf, RecordFile.DELETE, collection.getDatabaseName(), collection.getCollectionName(), new Document("_id", id));
        append(buf);
    }

    void recordMeta(byte type, String database, String collection, Document body) {
        if (!shouldJournal()) {
            return;
        }
        ByteBuf buf = scratch.get();
        buf.clear();
        RecordFile.encode(buf, type, database, collection, body);
        append(buf);
    }

    void adjustLiveBytes(long delta) {
        liveBytes.addAndGet(delta);
    }

    private void append(ByteBuf buf) {
        synchronized (lock) {
            pending.writeBytes(buf, buf.readerIndex(), buf.readableBytes());
        }
        trimScratch(buf);
    }

    private void trimScratch(ByteBuf buf) {
        if (buf.capacity() > (1 << 20)) {
            scratch.set(Unpooled.buffer(4096));
        }
    }

    /**
     * Writes every pending record to the journal file. Called after each command, before its
     * reply is sent; records of other commands pending at that moment go along (they are older).
     */
    void commit() {
        if (dir == null) {
            return;
        }
        synchronized (lock) {
            if (pending.readableBytes() == 0) {
                return;
            }
            try {
                writePendingLocked();
            } catch (IOException e) {
                throw new UncheckedIOException("journal write failed", e);
            }
        }
        maybeCompact();
    }

    private void writePendingLocked() throws IOException {
        int n = pending.readableBytes();
        if (n == 0) {
            return;
        }
        ByteBuffer nio = pending.nioBuffer();
        while (nio.hasRemaining()) {
            journal.write(nio);
        }
        journalBytes += n;
        unsynced = true;
        if (pending.capacity() > (8 << 20)) {
            pending = Unpooled.buffer(1 << 16);
        } else {
            pending.clear();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Start, stop

    /** Loads the snapshot and journals into the backend, then opens a new journal. */
    void open(EngramBackend backend) throws IOException {
        this.backend = backend;
        if (dir == null) {
            return;
        }
        Files.createDirectories(dir);
        long started = System.nanoTime();
        Files.deleteIfExists(dir.resolve(SNAPSHOT_TMP));
        loading = true;
        long firstJournal = 1;
        try {
            Path snapshot = dir.resolve(SNAPSHOT);
            if (Files.exists(snapshot)) {
                RecordFile.ReadResult r = RecordFile.read(snapshot, RecordFile.SNAPSHOT_MAGIC, backend::apply);
                if (!r.sawEnd) {
                    // A snapshot is only renamed into place after it was written whole and fsynced.
                    throw new IOException("snapshot " + snapshot + " is damaged (" + r.stopReason
                        + "); refusing to start rather than serve partial data");
                }
                firstJournal = r.sequence;
                snapshotBytes = r.fileBytes;
                loadedRecords += r.records;
            }
            List<Long> numbers = journalNumbers();
            long last = firstJournal - 1;
            for (int i = 0; i < numbers.size(); i++) {
                long number = numbers.get(i);
                Path file = journalPath(number);
                if (number < firstJournal) {
                    Files.deleteIfExists(file);
                    continue;
                }
                RecordFile.ReadResult r = RecordFile.read(file, RecordFile.JOURNAL_MAGIC, backend::apply);
                loadedRecords += r.records;
                if (r.stopReason != null) {
                    tornTails++;
                    String warning = "journal " + file.getFileName() + ": stopped at " + r.stopReason + " ("
                        + (r.fileBytes - r.goodBytes) + " bytes not replayed)";
                    loadWarnings.add(warning);
                    System.err.println("engram-store: " + warning);
                    // Cut the tail so the next start reads the same prefix and the file holds only good records.
                    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                        ch.truncate(Math.max(r.goodBytes, RecordFile.HEADER_BYTES));
                        ch.force(true);
                    }
                }
                journalBytes += Math.max(r.goodBytes, RecordFile.HEADER_BYTES);
                last = number;
            }
            openJournal(Math.max(last + 1, firstJournal));
        } finally {
            loading = false;
        }
        loadMillis = (System.nanoTime() - started) / 1_000_000;
        System.err.println("engram-store: loaded " + loadedRecords + " records from " + dir + " in " + loadMillis
            + " ms; live data " + liveBytes.get() + " bytes, files " + diskBytes() + " bytes");
        if (needsCompaction()) {
            compactNow();
        }
        fsyncThread = new Thread(this::fsyncLoop, "engram-store-fsync");
        fsyncThread.setDaemon(true);
        fsyncThread.start();
    }

    private List<Long> journalNumbers() throws IOException {
        List<Long> numbers = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(p -> {
                Matcher m = JOURNAL_NAME.matcher(p.getFileName().toString());
                if (m.matches()) {
                    numbers.add(Long.parseLong(m.group(1)));
                }
            });
        }
        numbers.sort(Long::compare);
        return numbers;
    }

    private Path journalPath(long number) {
        return dir.resolve(String.format("journal-%09d.log", number));
    }

    /** Opens (creating) journal `number` and makes it the current one; caller holds the lock or is starting. */
    private void openJournal(long number) throws IOException {
        Path file = journalPath(number);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        ByteBuffer header = RecordFile.header(RecordFile.JOURNAL_MAGIC, number);
        while (header.hasRemaining()) {
            channel.write(header);
        }
        channel.force(true);
        fsyncDirectory();
        journal = channel;
        journalNumber = number;
        journalBytes += RecordFile.HEADER_BYTES;
    }

    private void fsyncDirectory() {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // Some file systems cannot fsync a directory; the rename is still atomic.
        }
    }

    private void fsyncLoop() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(fsyncIntervalMillis);
            } catch (InterruptedException e) {
                return;
            }
            fsync();
        }
    }

    private void fsync() {
        FileChannel channel;
        synchronized (lock) {
            if (!unsynced || journal == null) {
                return;
            }
            unsynced = false;
            channel = journal;
        }
        try {
            channel.force(false);
        } catch (IOException e) {
            // A journal closed by a rotation was forced before it was closed.
        }
    }

    /** Clean shutdown: everything pending is written and fsynced. */
    void close() {
        if (dir == null) {
            return;
        }
        if (fsyncThread != null) {
            fsyncThread.interrupt();
        }
        synchronized (lock) {
            try {
                writePendingLocked();
                journal.force(true);
                journal.close();
            } catch (IOException e) {
                System.err.println("engram-store: error closing the journal: " + e);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Compaction

    long diskBytes() {
        return snapshotBytes + journalBytes;
    }

    long liveBytes() {
        return liveBytes.get();
    }

    private boolean needsCompaction() {
        return diskBytes() > 2 * liveBytes.get() + COMPACT_SLACK_BYTES;
    }

    private void maybeCompact() {
        if (!needsCompaction() || !compacting.compareAndSet(false, true)) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                compact();
            } finally {
                compacting.set(false);
            }
        }, "engram-store-compaction");
        t.setDaemon(true);
        t.start();
    }

    /** Compacts on the calling thread (start-up, and the admin command). */
    void compactNow() {
        while (!compacting.compareAndSet(false, true)) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        try {
            compact();
        } finally {
            compacting.set(false);
        }
    }

    private void compact() {
        long started = System.nanoTime();
        try {
            long snapshotSequence;
            synchronized (lock) {
                writePendingLocked();
                journal.force(true);
                journal.close();
                journalBytes = 0;
                openJournal(journalNumber + 1);
                snapshotSequence = journalNumber;
            }
            Path tmp = dir.resolve(SNAPSHOT_TMP);
            long records = 0;
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer header = RecordFile.header(RecordFile.SNAPSHOT_MAGIC, snapshotSequence);
                while (header.hasRemaining()) {
                    out.write(header);
                }
                ByteBuf buf = Unpooled.buffer(1 << 20);
                for (EngramCollection collection : backend.journaledCollections()) {
                    String db = collection.getDatabaseName();
                    String name = collection.getCollectionName();
                    RecordFile.encode(buf, RecordFile.CREATE_COLLECTION, db, name, new Document());
                    records++;
                    for (Document index : backend.indexDescriptions(collection)) {
                        RecordFile.encode(buf, RecordFile.CREATE_INDEX, db, name, index);
                        records++;
                    }
                    for (Document document : collection.liveDocuments()) {
                        RecordFile.encode(buf, RecordFile.PUT, db, name, document);
                        records++;
                        if (buf.readableBytes() > (1 << 20)) {
                            drain(buf, out);
                        }
                    }
                }
                RecordFile.encode(buf, RecordFile.END, "", "", new Document("records", records));
                drain(buf, out);
                out.force(true);
            }
            long size = Files.size(tmp);
            Files.move(tmp, dir.resolve(SNAPSHOT), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            fsyncDirectory();
            snapshotBytes = size;
            for (long number : journalNumbers()) {
                if (number < snapshotSequence) {
                    Files.deleteIfExists(journalPath(number));
                }
            }
            compactions.incrementAndGet();
            lastCompactionMillis = (System.nanoTime() - started) / 1_000_000;
            lastCompactionError = null;
        } catch (IOException | RuntimeException e) {
            lastCompactionError = e.toString();
            System.err.println("engram-store: compaction failed (the journal keeps everything): " + e);
        }
    }

    private static void drain(ByteBuf buf, FileChannel out) throws IOException {
        ByteBuffer nio = buf.nioBuffer();
        while (nio.hasRemaining()) {
            out.write(nio);
        }
        buf.clear();
    }

    Document stats() {
        Document doc = new Document("persistent", dir != null);
        doc.append("dir", dir == null ? null : dir.toString());
        doc.append("liveBytes", liveBytes.get());
        doc.append("snapshotBytes", snapshotBytes);
        doc.append("journalBytes", journalBytes);
        doc.append("diskBytes", diskBytes());
        doc.append("compactions", compactions.get());
        doc.append("compacting", compacting.get());
        doc.append("lastCompactionMillis", lastCompactionMillis);
        doc.append("lastCompactionError", lastCompactionError);
        doc.append("loadMillis", loadMillis);
        doc.append("loadedRecords", loadedRecords);
        doc.append("tornTails", tornTails);
        synchronized (loadWarnings) {
            doc.append("loadWarnings", new ArrayList<>(loadWarnings));
        }
        doc.append("fsyncIntervalMillis", fsyncIntervalMillis);
        return doc;
    }
}
