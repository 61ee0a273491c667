/**
 * The postings store of one lexical partition (search/lexical-partition.ts): every term's postings
 * (slot, term frequency) are a block inside one shared pair of typed arrays, the "arena", so a
 * term costs a few ints, not arrays of its own.
 *
 * Layout: a sequence of blocks, each one header entry then `capacity` postings. The header (in
 * `slots`) is the owning term id, or, for a block no term owns any more, its negated total size,
 * so compaction can walk the arena in address order and slide blocks down. A term's postings are
 * `slots`/`frequencies`[start, start + length), with room up to start + capacity.
 *
 * A block that fills up moves to the arena's end with twice the room; the old block is free space
 * until the arena is compacted, in place. Postings of dead slots (the partition's tombstones, the
 * `dead` array every call is given) are skipped when the partition scores, and dropped when a
 * block moves or the arena is compacted.
 *
 * The partition's scoring loops read the arrays directly, for speed; only this class resizes them
 * or moves blocks.
 */

const INITIAL_TERMS = 64;
export const INITIAL_ARENA = 256;
const MIN_BLOCK = 2;
const BLOCK_GROWTH = 2;
/** Small steps: growing copies the arena while the old one is still alive, so peaks are old + new. */
export const ARENA_GROWTH = 1.2;
/** Compact instead of growing when this share of the arena is reclaimable (see reclaimableEntries). */
const ARENA_RECLAIM_FRACTION = 0.25;
/** After compacting, grow anyway unless this share of the arena is free for new postings. */
const ARENA_MIN_FREE_AFTER_COMPACTION = 0.1;

function freeBlockHeader(capacity: number): number {
  return -(capacity + 1);
}

function freeBlockSize(header: number): number {
  return -header;
}

export function grownInt32(array: Int32Array, minLength: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(Math.max(minLength, array.length * 2));
  grown.set(array);
  return grown;
}

const byteLengthOf = (pieces: readonly Uint8Array[]): number => pieces.reduce((sum, piece) => sum + piece.byteLength, 0);

/** Bytes read in order from pieces (a snapshot's parts), each copied once into the arena. */
class PieceReader {
  private piece = 0;
  private offset = 0;

  constructor(private readonly pieces: readonly Uint8Array[]) {}

  copyTo(target: Uint8Array, at: number, byteLength: number): void {
    while (byteLength > 0) {
      const current = this.pieces[this.piece];
      if (!current) throw new Error('lexical state: bad posting lists');
      const step = Math.min(byteLength, current.byteLength - this.offset);
      target.set(current.subarray(this.offset, this.offset + step), at);
      at += step;
      byteLength -= step;
      this.offset += step;
      if (this.offset === current.byteLength) {
        this.piece++;
        this.offset = 0;
      }
    }
  }
}

export class PostingArena {
  /** Per term id: where its postings start, how many there are, and its block's room. */
  start = new Int32Array(INITIAL_TERMS);
  length = new Int32Array(INITIAL_TERMS);
  capacity = new Int32Array(INITIAL_TERMS);
  /** Term ids handed out so far (freed ones included: the partition reuses them). */
  termCount = 0;

  slots = new Int32Array(INITIAL_ARENA);
  frequencies = new Uint16Array(INITIAL_ARENA);
  /** Entries of the arena in use, free blocks included. */
  used = 0;
  /** Postings, inside term blocks, that point at dead slots. */
  deadPostings = 0;

  /**
   * An arena laid out as appends would lay it out, each term's block its header then its postings:
   * term `i` holds `termLength[i]` postings, following each other in the slots and frequencies,
   * given as their bytes (little-endian Int32 and Uint16) in pieces of any size and alignment.
   */
  static fromLists(termLength: Int32Array, slotBytes: readonly Uint8Array[], frequencyBytes: readonly Uint8Array[]): PostingArena {
    const arena = new PostingArena();
    const termCount = termLength.length;
    const postings = byteLengthOf(slotBytes) / 4;
    if (!Number.isInteger(postings) || byteLengthOf(frequencyBytes) !== postings * 2) throw new Error('lexical state: bad posting lists');
    const capacity = Math.max(INITIAL_TERMS, termCount);
    arena.start = new Int32Array(capacity);
    arena.length = new Int32Array(capacity);
    arena.capacity = new Int32Array(capacity);
    arena.termCount = termCount;
    const arenaLength = Math.max(INITIAL_ARENA, Math.ceil((postings + termCount) * ARENA_GROWTH));
    arena.slots = new Int32Array(arenaLength);
    arena.frequencies = new Uint16Array(arenaLength);
    const slotsOut = new Uint8Array(arena.slots.buffer);
    const frequenciesOut = new Uint8Array(arena.frequencies.buffer);
    const slotsIn = new PieceReader(slotBytes);
    const frequenciesIn = new PieceReader(frequencyBytes);
    let read = 0;
    let write = 0;
    for (let termId = 0; termId < termCount; termId++) {
      const length = termLength[termId]!;
      if (length <= 0 || read + length > postings) throw new Error('lexical state: bad posting list');
      arena.slots[write] = termId;
      const start = write + 1;
      slotsIn.copyTo(slotsOut, start * 4, length * 4);
      frequenciesIn.copyTo(frequenciesOut, start * 2, length * 2);
      arena.start[termId] = start;
      arena.length[termId] = length;
      arena.capacity[termId] = length;
      read += length;
      write = start + length;
    }
    if (read !== postings) throw new Error('lexical state: bad posting lists');
    arena.used = write;
    return arena;
  }

  /** A new term id, with no block yet. */
  newTerm(): number {
    const termId = this.termCount++;
    if (termId >= this.start.length) {
      this.start = grownInt32(this.start, termId + 1);
      this.length = grownInt32(this.length, termId + 1);
      this.capacity = grownInt32(this.capacity, termId + 1);
    }
    this.clearTerm(termId);
    return termId;
  }

  /** Forgets the term's block (its room is reclaimed by the next compaction). */
  clearTerm(termId: number): void {
    this.start[termId] = 0;
    this.length[termId] = 0;
    this.capacity[termId] = 0;
  }

  /** Postings in term blocks, dead ones included. */
  postingCount(): number {
    let postings = 0;
    for (let termId = 0; termId < this.termCount; termId++) postings += this.length[termId]!;
    return postings;
  }

  append(termId: number, slot: number, frequency: number, dead: Uint8Array): void {
    if (this.length[termId] === this.capacity[termId]) this.growBlock(termId, dead);
    const at = this.start[termId]! + this.length[termId]!;
    this.slots[at] = slot;
    this.frequencies[at] = frequency;
    this.length[termId]!++;
  }

  /**
   * Gives a full block twice the room: in place when it is the arena's last block, otherwise by
   * moving it to the arena's end (dropping its dead postings) and freeing the old block.
   */
  private growBlock(termId: number, dead: Uint8Array): void {
    const oldCapacity = this.capacity[termId]!;
    const newCapacity = Math.max(MIN_BLOCK, Math.ceil(oldCapacity * BLOCK_GROWTH));
    this.ensureRoom(newCapacity + 1, dead);
    // A compaction may just have dropped dead postings of this term, leaving room where it is.
    const capacity = this.capacity[termId]!;
    const length = this.length[termId]!;
    if (length < capacity) return;
    const from = this.start[termId]!;
    if (capacity > 0 && from + capacity === this.used) {
      this.used += newCapacity - capacity;
      this.capacity[termId] = newCapacity;
      return;
    }
    const to = this.used + 1;
    this.slots[to - 1] = termId;
    let write = to;
    if (this.deadPostings === 0) {
      this.slots.copyWithin(to, from, from + length);
      this.frequencies.copyWithin(to, from, from + length);
      write += length;
    } else {
      for (let read = from; read < from + length; read++) {
        const slot = this.slots[read]!;
        if (dead[slot] === 1) continue;
        this.slots[write] = slot;
        this.frequencies[write] = this.frequencies[read]!;
        write++;
      }
      this.deadPostings -= length - (write - to);
    }
    if (capacity > 0) this.slots[from - 1] = freeBlockHeader(capacity);
    this.start[termId] = to;
    this.length[termId] = write - to;
    this.capacity[termId] = newCapacity;
    this.used = to + newCapacity;
  }

  /** Makes room for `extra` entries at the arena's end: by compacting when enough is reclaimable, else by growing. */
  private ensureRoom(extra: number, dead: Uint8Array): void {
    if (this.used + extra <= this.slots.length) return;
    if (this.reclaimableEntries() >= this.used * ARENA_RECLAIM_FRACTION) this.compact(dead, undefined, undefined);
    // Grow when compaction left little free room, so that appends do not compact over and over.
    const length = this.slots.length;
    if (this.used + extra <= length && this.used <= length * (1 - ARENA_MIN_FREE_AFTER_COMPACTION)) return;
    this.resize(Math.max(this.used + extra, Math.ceil(length * ARENA_GROWTH)));
  }

  /** Entries a compaction would give back: free blocks, dead postings, spare room beyond 1/8 per block. */
  private reclaimableEntries(): number {
    let kept = -this.deadPostings;
    for (let termId = 0; termId < this.termCount; termId++) {
      const length = this.length[termId]!;
      if (this.capacity[termId]! > 0) kept += 1 + length + (length >> 3);
    }
    return this.used - kept;
  }

  resize(length: number): void {
    const slots = new Int32Array(length);
    slots.set(this.slots.subarray(0, this.used));
    const frequencies = new Uint16Array(length);
    frequencies.set(this.frequencies.subarray(0, this.used));
    this.slots = slots;
    this.frequencies = frequencies;
  }

  /**
   * Slides every block toward the arena's start, in address order (the block headers make the
   * arena walkable), dropping free blocks and dead postings, so no second arena is allocated.
   * Each block keeps up to 1/8 spare room where the gap allows. With `slotRemap` slots are
   * renumbered; `emptied` hears of each term left without postings (its block is gone).
   */
  compact(dead: Uint8Array, slotRemap: Int32Array | undefined, emptied: ((termId: number) => void) | undefined): void {
    const slots = this.slots;
    const frequencies = this.frequencies;
    let read = 0;
    let write = 0;
    while (read < this.used) {
      const header = slots[read]!;
      if (header < 0) {
        read += freeBlockSize(header);
        continue;
      }
      const termId = header;
      const from = read + 1;
      const end = from + this.length[termId]!;
      const nextRead = from + this.capacity[termId]!;
      // Writing never overtakes reading: write <= read, and a block never gets longer than its gap.
      let out = write + 1;
      for (let at = from; at < end; at++) {
        const slot = slots[at]!;
        if (dead[slot] === 1) continue;
        slots[out] = slotRemap ? slotRemap[slot]! : slot;
        frequencies[out] = frequencies[at]!;
        out++;
      }
      read = nextRead;
      const live = out - write - 1;
      if (live === 0) {
        this.length[termId] = 0;
        this.capacity[termId] = 0;
        emptied?.(termId);
        continue;
      }
      const capacity = Math.min(live + (live >> 3), nextRead - write - 1);
      slots[write] = termId;
      this.start[termId] = write + 1;
      this.length[termId] = live;
      this.capacity[termId] = capacity;
      write += 1 + capacity;
    }
    this.used = write;
    this.deadPostings = 0;
  }

  /** Bytes of the typed arrays. */
  byteLength(): number {
    return [this.start, this.length, this.capacity, this.slots, this.frequencies].reduce((sum, array) => sum + array.byteLength, 0);
  }
}
