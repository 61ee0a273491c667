package dev.engram.store;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.CRC32;

/**
 * The on-disk format shared by the journal and the snapshot: a file header, then framed records.
 *
 * <pre>
 *   file   = magic (8 bytes) , sequence (int64, little-endian) , record*
 *   record = length (int32 LE, of payload) , crc32 (int32 LE, of payload) , payload
 *   payload= type (1 byte) , database (cstring) , collection (cstring) , body (BSON document)
 * </pre>
 *
 * A record is only believed when its whole payload is present and its CRC matches; reading stops
 * at the first one that is not (a torn tail after a crash, or damage), and says where.
 */
final class RecordFile {

    static final byte PUT = 1;
    static final byte DELETE = 2;
    static final byte CREATE_COLLECTION = 3;
    static final byte DROP_COLLECTION = 4;
    static final byte CREATE_INDEX = 5;
    static final byte DROP_INDEX = 6;
    static final byte DROP_DATABASE = 7;
    /** Last record of a complete snapshot: body {records: n}. */
    static final byte END = 9;

    static final byte[] JOURNAL_MAGIC = "ENGRAMJ1".getBytes(StandardCharsets.US_ASCII);
    static final byte[] SNAPSHOT_MAGIC = "ENGRAMS1".getBytes(StandardCharsets.US_ASCII);
    static final int HEADER_BYTES = 16;
    /** Larger than any BSON document (16 MiB) plus names: a length above this is damage, not data. */
    private static final int MAX_PAYLOAD = 64 * 1024 * 1024;

    private RecordFile() {
    }

    record Entry(byte type, String database, String collection, Document body) {
    }

    /** Encodes one framed record into {@code out}; returns the BSON size of the body. */
    static int encode(ByteBuf out, byte type, String database, String collection, Document body) {
        int start = out.writerIndex();
        out.writeIntLE(0);
        out.writeIntLE(0);
        int payloadStart = out.writerIndex();
        out.writeByte(type);
        writeCString(out, database);
        writeCString(out, collection);
        int bodyStart = out.writerIndex();
        BsonEncoder.encodeDocument(body, out);
        int bodySize = out.writerIndex() - bodyStart;
        int payloadLength = out.writerIndex() - payloadStart;
        CRC32 crc = new CRC32();
        crc.update(out.nioBuffer(payloadStart, payloadLength));
        out.setIntLE(start, payloadLength);
        out.setIntLE(start + 4, (int) crc.getValue());
        return bodySize;
    }

    private static void writeCString(ByteBuf out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        out.writeByte(0);
    }

    static ByteBuffer header(byte[] magic, long sequence) {
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        header.put(magic);
        header.putLong(sequence);
        header.flip();
        return header;
    }

    interface Visitor {
        void accept(Entry entry);
    }

    /** What reading a file found. */
    static final class ReadResult {
        long sequence;
        long records;
        /** Bytes of the header and every good record: where a torn tail starts. */
        long goodBytes;
        long fileBytes;
        boolean sawEnd;
        String stopReason;
    }

    /**
     * Reads a file's records in order, handing each good one to the visitor. Stops at EOF or at
     * the first record that is incomplete or fails its CRC; {@code goodBytes} says where.
     */
    static ReadResult read(Path file, byte[] magic, Visitor visitor) throws IOException {
        ReadResult result = new ReadResult();
        long size = java.nio.file.Files.size(file);
        result.fileBytes = size;
        try (java.io.InputStream in = new java.io.BufferedInputStream(java.nio.file.Files.newInputStream(file), 1 << 20)) {
            byte[] header = new byte[HEADER_BYTES];
            if (in.readNBytes(header, 0, HEADER_BYTES) < HEADER_BYTES) {
                result.stopReason = "file shorter than its header";
                return result;
            }
            ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
            byte[] seen = new byte[magic.length];
            h.get(seen);
            if (!java.util.Arrays.equals(seen, magic)) {
                result.stopReason = "not a " + new String(magic, StandardCharsets.US_ASCII) + " file";
                return result;
            }
            result.sequence = h.getLong();
            long offset = HEADER_BYTES;
            result.goodBytes = offset;
            byte[] frame = new byte[8];
            while (offset < size) {
                if (in.readNBytes(frame, 0, 8) < 8) {
                    result.stopReason = "torn record header at byte " + offset;
                    break;
                }
                ByteBuffer f = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
                int length = f.getInt();
                int expectedCrc = f.getInt();
                if (length <= 0 || length > MAX_PAYLOAD || offset + 8 + length > size) {
                    result.stopReason = "incomplete record at byte " + offset;
                    break;
                }
                byte[] payload = new byte[length];
                if (in.readNBytes(payload, 0, length) < length) {
                    result.stopReason = "incomplete record at byte " + offset;
                    break;
                }
                CRC32 crc = new CRC32();
                crc.update(payload, 0, length);
                if ((int) crc.getValue() != expectedCrc) {
                    result.stopReason = "checksum mismatch at byte " + offset;
                    break;
                }
                Entry entry = decode(ByteBuffer.wrap(payload));
                offset += 8 + length;
                result.goodBytes = offset;
                result.records++;
                if (entry.type() == END) {
                    result.sawEnd = true;
                    continue;
                }
                visitor.accept(entry);
            }
        }
        return result;
    }

    private static Entry decode(ByteBuffer payload) {
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        byte type = buf.readByte();
        String database = BsonDecoder.decodeCString(buf);
        String collection = BsonDecoder.decodeCString(buf);
        Document body = BsonDecoder.decodeBson(buf);
        return new Entry(type, database, collection, body);
    }
}
