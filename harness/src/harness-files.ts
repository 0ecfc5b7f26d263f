/**
 * The harness's twenty oversized source files: each holds exactly one
 * `baudRate` and one `channel` definition deep inside, among distractors a
 * careless extractor would take (comments naming old values, longer
 * identifiers such as channelCount, a channelMask). Deterministic from the
 * index, so every run checks the same files.
 */
export interface HarnessFile {
  path: string;
  text: string;
  /** The exact values the extract must return. */
  expected: { baudRate: string; channel: string };
}

const BAUD_RATES = ['9600', '19200', '38400', '57600', '115200', '230400', '460800', '921600', '1000000', '2000000'];

export function harnessFile(index: number, lines = 2_400): HarnessFile {
  const baudRate = BAUD_RATES[index % BAUD_RATES.length]!;
  const channel = String(1 + ((index * 7) % 26));
  const baudAt = 300 + ((index * 131) % (lines - 600));
  let chanAt = 250 + ((index * 257 + 900) % (lines - 500));
  if (Math.abs(chanAt - baudAt) < 2) chanAt += 3;
  const out: string[] = [
    `// uart-bridge-${index}.ts: generated for the live branch-extract harness (oversized on purpose)`,
    '// history: baudRate was 4800 on revision A boards; the default channel used to be 0',
    'export const bridge = {',
  ];
  for (let i = out.length; i < lines - 1; i++) {
    if (i === baudAt) out.push(`  baudRate: ${baudRate},`);
    else if (i === chanAt) out.push(`  channel: ${channel},`);
    else if (i % 89 === 0) out.push(`  channelCount${i}: ${i % 13}, // per-bank channel count, not the channel`);
    else if (i % 211 === 0) out.push(`  channelMask${i}: 0x${(i & 0xff).toString(16)}, // baudRate divisor table follows`);
    else out.push(`  reg_${index}_${i}: 0x${((i * 2654435761 + index) >>> 0).toString(16).padStart(8, '0')}, // filler ${'.'.repeat(i % 32)}`);
  }
  out.push('};');
  return { path: `src/bridges/uart-bridge-${String(index).padStart(2, '0')}.ts`, text: `${out.join('\n')}\n`, expected: { baudRate, channel } };
}

export function harnessFiles(count = 20): HarnessFile[] {
  return Array.from({ length: count }, (_, i) => harnessFile(i));
}
