/**
 * What the vector, lexical and graph indexes share: one partition per loaded collection, a memory
 * removed from every partition, and the loaded partitions among a search's collections (each
 * collection once, in the order asked).
 */
export abstract class PartitionedIndex<P extends { removeMemory(memoryId: string): void }> {
  protected readonly partitions = new Map<string, P>();

  /** A new, empty partition for the collection, in place of any it had. */
  abstract createPartition(collectionId: string): P;

  partition(collectionId: string): P | undefined {
    return this.partitions.get(collectionId);
  }

  dropPartition(collectionId: string): void {
    this.partitions.delete(collectionId);
  }

  loadedCollections(): string[] {
    return [...this.partitions.keys()];
  }

  removeMemory(memoryId: string): void {
    for (const partition of this.partitions.values()) partition.removeMemory(memoryId);
  }

  /** The loaded partitions of these collections, each once. */
  protected partitionsOf(collectionIds: readonly string[]): P[] {
    return [...new Set(collectionIds)].map((id) => this.partitions.get(id)).filter((partition): partition is P => partition !== undefined);
  }
}
