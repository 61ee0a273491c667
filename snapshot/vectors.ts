/**
 * The snapshot's vector encodings (docs/device-memory.md): entity name vectors int8 (a float32
 * scale, then one byte per dimension), chunk vectors float16 (two bytes per dimension,
 * little-endian), both base64.
 */
/** int8 with a per-vector scale: name vectors only decide "same entity?" against a threshold. */
export function encodeInt8(vector: Float32Array): string {
  let maxAbs = 0;
  for (const value of vector) maxAbs = Math.max(maxAbs, Math.abs(value));
  const scale = maxAbs > 0 ? maxAbs / 127 : 1;
  const bytes = Buffer.alloc(4 + vector.length);
  bytes.writeFloatLE(scale, 0);
  for (let i = 0; i < vector.length; i++) bytes.writeInt8(Math.round(vector[i]! / scale), 4 + i);
  return bytes.toString('base64');
}

export function decodeInt8(encoded: string, dimensions: number): Float32Array | null {
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length !== 4 + dimensions) return null;
  const scale = bytes.readFloatLE(0);
  if (!Number.isFinite(scale) || scale <= 0) return null;
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = bytes.readInt8(4 + i) * scale;
  return vector;
}

const float32 = new Float32Array(1);
const bits32 = new Uint32Array(float32.buffer);

/** IEEE 754 half precision, round to nearest even. */
function toHalf(value: number): number {
  float32[0] = value;
  const x = bits32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = ((x >>> 23) & 0xff) - 127 + 15;
  const mantissa = x & 0x7fffff;
  if (exponent >= 0x1f) return sign | 0x7c00 | (((x >>> 23) & 0xff) === 0xff && mantissa ? 0x200 : 0);
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - exponent;
    let half = full >>> shift;
    const remainder = full & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (remainder > halfway || (remainder === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = sign | (exponent << 10) | (mantissa >>> 13);
  const remainder = mantissa & 0x1fff;
  if (remainder > 0x1000 || (remainder === 0x1000 && half & 1)) half++;
  return half;
}

function fromHalf(half: number): number {
  const sign = half & 0x8000 ? -1 : 1;
  const exponent = (half >>> 10) & 0x1f;
  const mantissa = half & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

export function encodeFloat16(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 2);
  for (let i = 0; i < vector.length; i++) bytes.writeUInt16LE(toHalf(vector[i]!), i * 2);
  return bytes.toString('base64');
}

/** null when the length is wrong or any component is not finite. */
export function decodeFloat16(encoded: string, dimensions: number): Float32Array | null {
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length !== dimensions * 2) return null;
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    const value = fromHalf(bytes.readUInt16LE(i * 2));
    if (!Number.isFinite(value)) return null;
    vector[i] = value;
  }
  return vector;
}

/**
 * What decodeFloat16 accepts, without making the vector: the length, and no component whose
 * exponent bits are all set (an infinity or a NaN). The checks of a snapshot's open read every
 * chunk vector this way (decoding each one was a third of those checks).
 */
export function isFloat16Vector(encoded: string, dimensions: number): boolean {
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length !== dimensions * 2) return false;
  for (let at = 1; at < bytes.length; at += 2) if ((bytes[at]! & 0x7c) === 0x7c) return false;
  return true;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Whether `text` is base64 as the format allows it (BASE64). Base64 that Node writes back
 * unchanged is (the usual case: the service wrote it), tested natively (1 ms over a 1,000-memory
 * snapshot's chunk vectors, against 7 ms for the regular expression, and 15 for a scan in
 * JavaScript); anything else is tested by the regular expression.
 */
export function isBase64(text: string): boolean {
  return Buffer.from(text, 'base64').toString('base64') === text || BASE64.test(text);
}
