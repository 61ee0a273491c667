import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../config/index.js';
import {
  commandAvailable,
  pcmWav,
  silentWav,
  speakWav,
  toM4a,
  toMp3,
  toMulawWav,
  toOgg,
  toneSamples,
  toStereo44kWav,
} from '../test/fixtures/media.js';
import { cleanTranscript, createTranscriber, decodeAudio, decodeWav, planWindows, resample, SAMPLE_RATE } from './audio.js';
import { UnreadableContentError, type Extraction } from './types.js';

const SENTENCE = 'Please schedule a meeting with the design team for next Tuesday';
const MODEL_ID = 'Xenova/whisper-tiny.en';
const modelsDir = loadConfig().MODELS_DIR;
const haveModel = modelsDir !== undefined && existsSync(path.join(modelsDir, MODEL_ID, 'onnx', 'encoder_model_quantized.onnx'));
const haveTools = commandAvailable('ffmpeg') && commandAvailable('espeak-ng');

const transcript = (extraction: Extraction): string =>
  extraction.sections
    .map((section) => section.text)
    .join(' ')
    .toLowerCase();

function assertSentence(extraction: Extraction): void {
  const text = transcript(extraction);
  // Whisper tiny gets this sentence right; still, ask only for the words that carry it.
  const found = ['meeting', 'design', 'tuesday'].filter((keyword) => text.includes(keyword));
  assert.ok(found.length >= 2, `expected meeting, design, Tuesday in: ${text}`);
  assert.ok(text.includes('meeting'), text);
}

function zeroCrossingsPerSecond(samples: Float32Array, rate: number): number {
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 !== samples[i]! < 0) crossings++;
  return crossings / (samples.length / rate);
}

function rms(samples: Float32Array): number {
  return Math.sqrt(samples.reduce((sum, value) => sum + value * value, 0) / samples.length);
}

describe('audio decoding', () => {
  it('resamples 44.1 kHz to 16 kHz keeping pitch and level, and removes what 16 kHz cannot hold', () => {
    const tone = resample(toneSamples(1000, 2, 44_100), 44_100, SAMPLE_RATE);
    assert.equal(tone.length, 2 * SAMPLE_RATE);
    assert.ok(Math.abs(zeroCrossingsPerSecond(tone, SAMPLE_RATE) - 2000) < 5);
    assert.ok(Math.abs(rms(tone.subarray(1000, -1000)) - 0.5 / Math.SQRT2) < 0.01);
    const alias = resample(toneSamples(12_000, 1, 44_100), 44_100, SAMPLE_RATE);
    assert.ok(rms(alias.subarray(1000, -1000)) < 0.005, `12 kHz leaked: rms ${rms(alias)}`);
    const up = resample(toneSamples(440, 1, 8000), 8000, SAMPLE_RATE);
    assert.equal(up.length, SAMPLE_RATE);
    assert.ok(Math.abs(zeroCrossingsPerSecond(up, SAMPLE_RATE) - 880) < 5);
  });

  it('averages channels and reads 8, 16, 24-bit and float WAV data', () => {
    const left = toneSamples(500, 0.5, SAMPLE_RATE, 0.5);
    const stereo = new Float32Array(left.length * 2);
    for (let i = 0; i < left.length; i++) {
      stereo[i * 2] = left[i]!;
      stereo[i * 2 + 1] = 0;
    }
    const decoded = decodeWav(pcmWav(stereo, SAMPLE_RATE, 2));
    assert.ok(decoded);
    assert.equal(decoded.sampleRate, SAMPLE_RATE);
    assert.equal(decoded.samples.length, left.length);
    assert.ok(Math.abs(rms(decoded.samples) - 0.25 / Math.SQRT2) < 0.001);

    // 24-bit and 32-bit float, one sample each of +0.5 and -0.25, built by hand.
    const wav = (format: number, bits: number, data: Buffer): Buffer => {
      const header = pcmWav(new Float32Array(0), SAMPLE_RATE);
      header.writeUInt16LE(format, 20);
      header.writeUInt32LE((SAMPLE_RATE * bits) / 8, 28);
      header.writeUInt16LE(bits / 8, 32);
      header.writeUInt16LE(bits, 34);
      header.writeUInt32LE(data.length, 40);
      header.writeUInt32LE(36 + data.length, 4);
      return Buffer.concat([header, data]);
    };
    const int24 = Buffer.from([0x00, 0x00, 0x40, 0x00, 0x00, 0xe0]);
    assert.deepEqual([...decodeWav(wav(1, 24, int24))!.samples], [0.5, -0.25]);
    const float32 = Buffer.alloc(8);
    float32.writeFloatLE(0.5, 0);
    float32.writeFloatLE(-0.25, 4);
    assert.deepEqual([...decodeWav(wav(3, 32, float32))!.samples], [0.5, -0.25]);
    assert.deepEqual([...decodeWav(wav(1, 8, Buffer.from([192, 96])))!.samples], [0.5, -0.25]);
  });

  it('keeps the samples of a WAV cut short', () => {
    const whole = pcmWav(toneSamples(300, 1, SAMPLE_RATE), SAMPLE_RATE);
    const decoded = decodeWav(whole.subarray(0, 44 + 2 * 8000));
    assert.equal(decoded?.samples.length, 8000);
  });

  it('sends WAV encodings it does not read (µ-law) to ffmpeg', { skip: !haveTools && 'ffmpeg or espeak-ng missing' }, async () => {
    const mulaw = await toMulawWav(pcmWav(toneSamples(300, 1, 22_050), 22_050));
    assert.equal(decodeWav(mulaw), undefined);
    const samples = await decodeAudio(mulaw);
    assert.ok(Math.abs(samples.length - SAMPLE_RATE) < 50, `${samples.length} samples`);
  });

  it('refuses garbage, empty and over-long audio as unreadable content', { skip: !haveTools && 'ffmpeg missing' }, async () => {
    await assert.rejects(decodeAudio(Buffer.from('ID3 but then nothing that decodes '.repeat(20))), (error: unknown) => {
      assert.ok(error instanceof UnreadableContentError);
      assert.match(error.message, /could not decode the audio \(ffmpeg exit code \d+\)/);
      return true;
    });
    await assert.rejects(decodeAudio(Buffer.alloc(0)), UnreadableContentError);
    await assert.rejects(decodeAudio(silentWav(3), { maxDurationS: 2 }), /longer than 2 s/);
    const mp3 = await toMp3(silentWav(3));
    await assert.rejects(decodeAudio(mp3, { maxDurationS: 1 }), /longer than 1 s/);
  });

  it('plans the pipeline windows: 30 s, every 20 s, 5 s overlap on inner sides', () => {
    const s = SAMPLE_RATE;
    assert.deepEqual(planWindows(10 * s), [{ start: 0, end: 10 * s, strideLeft: 0, strideRight: 0 }]);
    assert.equal(planWindows(30 * s).length, 1);
    assert.deepEqual(planWindows(48 * s), [
      { start: 0, end: 30 * s, strideLeft: 0, strideRight: 5 * s },
      { start: 20 * s, end: 48 * s, strideLeft: 5 * s, strideRight: 0 },
    ]);
    assert.equal(planWindows(70 * s).length, 3);
  });

  it('strips Whisper non-speech annotations', () => {
    assert.equal(cleanTranscript(' [BLANK_AUDIO]'), '');
    assert.equal(cleanTranscript(' (music) Hello  there ♪'), 'Hello there');
  });
});

describe('transcriber set-up', () => {
  it('says clearly when the model is not in modelsDir and downloads are off', async () => {
    const transcriber = createTranscriber({ modelsDir: path.join(os.tmpdir(), 'no-models-here'), allowRemoteModels: false });
    const tone = pcmWav(toneSamples(440, 1, SAMPLE_RATE), SAMPLE_RATE);
    await assert.rejects(transcriber.transcribe(tone, 'audio/wav'), /speech model Xenova\/whisper-tiny.en not found/);
    await transcriber.close();
  });
});

const skipTranscriber = (!haveModel && 'whisper-tiny.en not in MODELS_DIR') || (!haveTools && 'ffmpeg or espeak-ng missing');

describe('transcriber', { skip: skipTranscriber }, () => {
  const transcriber = createTranscriber({ modelsDir, allowRemoteModels: false, modelId: MODEL_ID });
  after(() => transcriber.close());
  let speech: Buffer;
  const sentence = async (): Promise<Buffer> => (speech ??= await speakWav(SENTENCE));

  it('transcribes a spoken sentence from a 22 kHz WAV, with its time range', async () => {
    const wav = await sentence();
    const progress: [number, number][] = [];
    const extraction = await transcriber.transcribe(wav, 'audio/wav', (current, total) => {
      progress.push([current, total]);
    });
    assertSentence(extraction);
    assert.equal(extraction.mediaType, 'audio/wav');
    assert.equal(extraction.units, 1);
    assert.deepEqual(progress, [[1, 1]]);
    const duration = (wav.length - 44) / 2 / 22_050;
    for (const section of extraction.sections) {
      assert.equal(section.method, 'asr');
      assert.ok(section.start_s !== undefined && section.end_s !== undefined);
      assert.ok(section.start_s >= 0 && section.end_s > section.start_s && section.end_s <= duration + 0.01, JSON.stringify(section));
    }
  });

  it('transcribes MP3, Ogg Vorbis, M4A (index at the end) and stereo 44.1 kHz WAV', async () => {
    const wav = await sentence();
    for (const [bytes, mediaType] of [
      [await toMp3(wav), 'audio/mpeg'],
      [await toOgg(wav), 'audio/ogg'],
      [await toM4a(wav), 'audio/mp4'],
      [await toStereo44kWav(wav), 'audio/wav'],
    ] as const) {
      const extraction = await transcriber.transcribe(bytes, mediaType);
      assertSentence(extraction);
      assert.equal(extraction.mediaType, mediaType);
      assert.ok(extraction.sections[0]?.end_s !== undefined);
    }
  });

  it('transcribes audio longer than one window: progress per window, overlap said once, times in order', async () => {
    // About 45 s of continuous speech: two windows whose 10 s overlap falls mid-paragraph.
    const keywords = ['apples', 'bicycles', 'umbrella', 'volcano', 'guitar', 'penguin', 'library', 'chocolate', 'satellite', 'tomatoes'];
    const paragraph = keywords
      .map((word, i) => `Sentence ${i + 1} of the story is about the ${word} we saw yesterday afternoon.`)
      .join(' ');
    const long = await speakWav(paragraph);
    const progress: [number, number][] = [];
    const extraction = await transcriber.transcribe(long, 'audio/wav', (current, total) => {
      progress.push([current, total]);
    });
    assert.equal(extraction.units, 2);
    assert.deepEqual(progress, [
      [1, 2],
      [2, 2],
    ]);
    const text = transcript(extraction);
    const found = keywords.filter((word) => text.includes(word));
    assert.ok(found.length >= 8, `only ${found.join(', ')} in: ${text}`);
    for (const word of found) assert.equal(text.split(word).length - 1, 1, `"${word}" transcribed twice: ${text}`);
    const times = extraction.sections.flatMap((section) => [section.start_s!, section.end_s!]);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.ok(times.at(-1)! > 35, `last segment ends at ${times.at(-1)}`);
  });

  it('says so when there is no speech', async () => {
    await assert.rejects(transcriber.transcribe(silentWav(5), 'audio/wav'), (error: unknown) => {
      assert.ok(error instanceof UnreadableContentError);
      assert.equal(error.message, 'no speech found in the audio');
      return true;
    });
  });

  it('refuses garbage declared as audio/mpeg as unreadable content', async () => {
    await assert.rejects(transcriber.transcribe(Buffer.from('garbage '.repeat(100)), 'audio/mpeg'), UnreadableContentError);
  });

  it('stops between windows when cancelled', async () => {
    const controller = new AbortController();
    controller.abort(new Error('activity cancelled'));
    await assert.rejects(
      transcriber.transcribe(await sentence(), 'audio/wav', undefined, { signal: controller.signal }),
      /activity cancelled/,
    );
  });
});
