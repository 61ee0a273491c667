/**
 * A tiny authoritative DNS server on loopback UDP for the outbound-URL suites: it answers A and
 * AAAA questions from a table (or a function, for answers that change between queries, as a
 * rebinding server's do) and counts the questions it was asked. Nothing outside loopback is used.
 */
import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';

export type Answers = { A?: string[]; AAAA?: string[] } | ((type: 'A' | 'AAAA', queryNumber: number) => string[]);

export interface DnsServer {
  address: string;
  /** Questions asked per `name type`. */
  queries: Map<string, number>;
  set(name: string, answers: Answers): void;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  for (;;) {
    const length = message[at]!;
    if (length === 0) return { name: labels.join('.').toLowerCase(), end: at + 1 };
    labels.push(message.subarray(at + 1, at + 1 + length).toString('latin1'));
    at += 1 + length;
  }
}

export async function startDnsServer(): Promise<DnsServer> {
  const table = new Map<string, Answers>();
  const queries = new Map<string, number>();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, peer) => {
    const id = message.readUInt16BE(0);
    const { name, end } = readName(message, 12);
    const type = message.readUInt16BE(end);
    const question = message.subarray(12, end + 4);
    const typeName = type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : null;
    const key = `${name} ${typeName ?? type}`;
    const count = (queries.get(key) ?? 0) + 1;
    queries.set(key, count);
    const entry = table.get(name);
    const addresses = !entry || !typeName ? [] : typeof entry === 'function' ? entry(typeName, count) : (entry[typeName] ?? []);
    const records = addresses
      .filter((address) => (typeName === 'A' ? ipaddr.IPv4.isValid(address) : ipaddr.IPv6.isValid(address)))
      .map((address) => {
        const bytes = Buffer.from(ipaddr.parse(address).toByteArray());
        const record = Buffer.alloc(12);
        record.writeUInt16BE(0xc00c, 0); // pointer to the question's name
        record.writeUInt16BE(type, 2);
        record.writeUInt16BE(1, 4); // IN
        record.writeUInt32BE(0, 6); // TTL 0: a rebinding server's favourite
        record.writeUInt16BE(bytes.length, 10);
        return Buffer.concat([record, bytes]);
      });
    const header = Buffer.alloc(12);
    header.writeUInt16BE(id, 0);
    // Response, authoritative, recursion available; NXDOMAIN for names not in the table.
    header.writeUInt16BE(0x8480 | (entry ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    socket.send(Buffer.concat([header, question, ...records]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    queries,
    set: (name, answers) => void table.set(name.toLowerCase(), answers),
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
