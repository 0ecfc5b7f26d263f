import type { EvidenceInput } from '@vouch/contracts';
/** A successful observation. */
const ok = (kind: EvidenceInput['kind'], toolName: string, summary: string, extra: Partial<EvidenceInput> = {}): EvidenceInput => ({ kind, toolName, success: true, summary, ...extra });

/**
 * Four unrelated tasks, each with a completion summary and the evidence that
 * backs it. The ledger code must read all of them through one generic path.
 * The evidence states each claimed fact in its own words (the critic
 * approves only what an observation shows, not what it merely shares a
 * detail with).
 */
export interface TaskDomain {
  name: string;
  goal: string;
  summary: string;
  /** The claims a reader would pick out, with what each asserts. */
  expected: Array<{ text: string; kind: string; materiality: 'low' | 'medium' | 'high' }>;
  evidence: EvidenceInput[];
  /** Words that belong to this domain alone: none of them may appear in the ledger code. */
  vocabulary: string[];
}

export const TASK_DOMAINS: TaskDomain[] = [
  {
    name: 'embedded firmware configuration',
    goal: 'Set the UART2 baud rate to 115200 in the board config and flash firmware v2.1.0 to board-7',
    summary:
      'Changed UART2 baud rate from 9600 to 115200 in config/board.h. Flashed firmware v2.1.0 to board-7 and verified it boots. I might also tune the watchdog timeout later.',
    expected: [
      { text: 'Changed UART2 baud rate from 9600 to 115200 in config/board.h', kind: 'action', materiality: 'high' },
      { text: 'Flashed firmware v2.1.0 to board-7', kind: 'action', materiality: 'high' },
      { text: 'verified it boots', kind: 'verification', materiality: 'high' },
      { text: 'I might also tune the watchdog timeout later', kind: 'hedged', materiality: 'low' },
    ],
    evidence: [
      ok('file_change', 'editor', 'config/board.h: UART2 baud 9600 -> 115200'),
      ok('tool_result', 'flash_tool', 'wrote firmware v2.1.0 to board-7 (412 KB), checksum ok', { rawRef: 'blob://flash-logs/7f3a.txt' }),
      ok('runtime_observation', 'serial_console', 'board-7 boot log: firmware v2.1.0 started, UART2 at 115200'),
    ],
    vocabulary: ['firmware', 'uart', 'baud', 'watchdog', 'flash_tool', 'serial'],
  },
  {
    name: 'web service deploy',
    goal: 'Deploy the checkout service to staging and make sure the health endpoint responds',
    summary: 'Deployed checkout-service v3.4.0 to https://staging.shop.example.com. The /healthz endpoint returns 200. Let me know if you want production next.',
    expected: [
      { text: 'Deployed checkout-service v3.4.0 to https://staging.shop.example.com', kind: 'action', materiality: 'high' },
      { text: 'The /healthz endpoint returns 200', kind: 'verification', materiality: 'high' },
      { text: 'Let me know if you want production next', kind: 'aside', materiality: 'low' },
    ],
    evidence: [
      ok('delivery_result', 'deploy', 'checkout-service v3.4.0 rolled out to https://staging.shop.example.com (3/3 pods ready)'),
      ok('runtime_observation', 'curl', 'GET https://staging.shop.example.com/healthz -> 200 OK in 41 ms'),
    ],
    vocabulary: ['deploy', 'staging', 'healthz', 'checkout', 'kubernetes', 'pods'],
  },
  {
    name: 'data analysis report',
    goal: 'Analyse sales_2024.csv and report the top region by revenue',
    summary:
      'Loaded sales_2024.csv (12,480 rows) with pandas. Found that the West region had the highest revenue at $4.2M. Wrote the summary to report.md. The East region is probably second.',
    expected: [
      { text: 'Loaded sales_2024.csv (12,480 rows) with pandas', kind: 'action', materiality: 'high' },
      // "Found that X" claims X: a statement, which the full policy still needs evidence for.
      { text: 'Found that the West region had the highest revenue at $4.2M', kind: 'statement', materiality: 'medium' },
      { text: 'Wrote the summary to report.md', kind: 'action', materiality: 'high' },
      { text: 'The East region is probably second', kind: 'hedged', materiality: 'low' },
    ],
    evidence: [
      ok('tool_result', 'python', 'read sales_2024.csv: 12480 rows, 9 columns'),
      ok('tool_result', 'python', 'groupby region, revenue: West 4.2M (highest), East 3.1M, North 2.7M'),
      ok('file_change', 'editor', 'created report.md (1.1 KB)'),
    ],
    vocabulary: ['sales', 'revenue', 'pandas', 'region', 'groupby', 'csv'],
  },
  {
    name: 'document translation',
    goal: "Translate the user guide chapter 'Getting Started' from English to German",
    summary:
      'Translated the chapter "Getting Started" into German (1,850 words) and saved it as getting-started.de.md. Checked that all 14 code blocks are unchanged. Next, I will translate the FAQ.',
    expected: [
      { text: 'Translated the chapter "Getting Started" into German (1,850 words)', kind: 'action', materiality: 'high' },
      { text: 'saved it as getting-started.de.md', kind: 'action', materiality: 'high' },
      { text: 'Checked that all 14 code blocks are unchanged', kind: 'verification', materiality: 'high' },
      { text: 'Next, I will translate the FAQ', kind: 'plan', materiality: 'low' },
    ],
    evidence: [
      ok('tool_result', 'translator', 'translated chapter "Getting Started" en->de (German): 1850 words'),
      ok('file_change', 'editor', 'wrote docs/getting-started.de.md'),
      ok('tool_result', 'diff', 'code blocks unchanged: 14 of 14 identical'),
    ],
    vocabulary: ['translat', 'german', 'chapter', 'faq', 'english'],
  },
];
